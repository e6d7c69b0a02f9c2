#!/usr/bin/env bash
# Runs Ceph's S3 compatibility tests (github.com/ceph/s3-tests, boto3) against a fresh Cairn and
# counts the result by area (issue 29's conformance figures, docs/api.md):
#
#   scripts/s3-conformance.sh S3TESTS_DIR [PYTEST_ARGS...]   # e.g. -k acl, or FILE.py::TEST ids
#
# S3TESTS_DIR is a checkout of ceph/s3-tests (the figures in docs/api.md name the commit). It is
# not fetched here: this machine reaches no GitHub, and the suite is not part of scripts/test.sh
# (it is a measurement, with failures expected). The tests run are s3tests/functional/test_s3.py
# and test_headers.py, less those for features that are not S3's or that no S3-compatible store
# is asked for here (MARKERS below: RGW-only extensions, IAM/STS, S3 Select, SNS, lifecycle
# transitions to cloud tiers, bucket logging, storage classes, tests AWS itself fails).
#
# Cairn is started as scripts/swift-functests.sh starts it (one server, or a local cluster with
# CAIRN_TEST_CLUSTER, e.g. "--storage 4 --proxies 1"), with SSE-C allowed over HTTP and two
# SSE-KMS keys; three accounts (main, alt, tenant) with one admin user each are made with
# `cairn admin`. Output: the totals and a table by area; OUT/report.jsonl holds every test's
# outcome (test/s3-conformance/summarize.py OUT/report.jsonl --failed lists the failures).
#
# Environment: CAIRN_BIN, CAIRN_CACHE (default .cache), OUT (default $CAIRN_CACHE/s3-conformance),
# VENV (default $CAIRN_CACHE/venv-s3tests), CAIRN_TEST_CLUSTER, MARKERS (a pytest -m expression),
# S3TESTS_COMMIT (the suite's commit, printed, when S3TESTS_DIR is not a git checkout).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD
[ $# -ge 1 ] && [ -d "$1/s3tests/functional" ] || { sed -n '2,20p' "$0" >&2; exit 2; }
suite=$(cd "$1" && pwd); shift
cache=${CAIRN_CACHE:-$repo/.cache}
OUT=${OUT:-$cache/s3-conformance}
VENV=${VENV:-$cache/venv-s3tests}
here=$repo/test/s3-conformance
MARKERS=${MARKERS:-not fails_on_aws and not fails_on_s3 and not iam_account and not iam_cross_account and not iam_role and not iam_tenant and not iam_user and not role_policy and not user_policy and not group_policy and not group and not session_policy and not test_of_sts and not webidentity_test and not abac_test and not token_claims_trust_policy_test and not token_principal_tag_role_policy_test and not token_request_tag_trust_policy_test and not token_resource_tags_test and not token_role_tags_test and not token_tag_keys_test and not s3select and not sns and not cloud_transition and not cloud_restore and not lifecycle_transition and not storage_class and not bucket_logging and not bucket_logging_cleanup and not appendobject and not fails_without_logging_rollover and not copy_cross_storage_class and not encryption_with_kms_and_sse_s3_key_rotation}

if ! [ -x "$VENV/bin/pytest" ]; then
  python3 -m venv "$VENV" || exit 2
  "$VENV/bin/pip" install -q boto3 botocore munch gevent isodate requests pytz httplib2 lxml pytest PyYAML || exit 2
fi

bin=${CAIRN_BIN:-}
if [ -z "$bin" ]; then
  mkdir -p "$cache/bin"
  go build -o "$cache/bin/cairn" ./cmd/cairn || exit 2
  bin=$cache/bin/cairn
fi
rm -rf "$OUT"; mkdir -p "$OUT"
data=$(mktemp -d)
root_ak=conformance-root
root_sk=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
mode=(server)
# shellcheck disable=SC2206 # the topology is a list of words
[ -n "${CAIRN_TEST_CLUSTER:-}" ] && mode=(local-cluster $CAIRN_TEST_CLUSTER)
"$bin" "${mode[@]}" --data "$data" --listen 127.0.0.1:0 --sse-c-allow-http --root-access-key "$root_ak" --root-secret-key "$root_sk" --log-level warn \
  > "$OUT/cairn.log" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$data" "$data.master-key"; }
trap cleanup EXIT
endpoint=
ready_by=$((SECONDS + 120))
while ((SECONDS < ready_by)); do
  endpoint=$(sed -n 's/^cairn: S3 endpoint \(http[^ ]*\).*/\1/p' "$OUT/cairn.log" | head -1)
  [ -n "$endpoint" ] && curl -sf -m 30 "$endpoint/healthz" >/dev/null && break
  endpoint=
  kill -0 "$pid" 2>/dev/null || { echo "s3-conformance: cairn exited:" >&2; tail -20 "$OUT/cairn.log" >&2; exit 2; }
  sleep 0.1
done
[ -n "$endpoint" ] || { echo "s3-conformance: cairn did not start within 120 s" >&2; exit 2; }
echo "cairn at $endpoint (log $OUT/cairn.log)"

adm() { "$bin" admin --endpoint "$endpoint" --access-key "$root_ak" --secret-key "$root_sk" "$@"; }
key() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' | cut -c1-"$1" | tr a-f A-F; }
declare -A ak sk
for a in main alt tenant; do
  adm account create "$a" >/dev/null || exit 2
  ak[$a]=$(key 20); sk[$a]=$(key 40)
  adm user create "$a:tester" --admin --user-access-key "${ak[$a]}" --user-secret-key "${sk[$a]}" >/dev/null 2>"$OUT/admin.err" || { cat "$OUT/admin.err" >&2; exit 2; }
done
kmskey() { adm kms create --alias "$1" --json | "$VENV/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["id"])'; }
kms1=$(kmskey s3tests-1) || exit 2
kms2=$(kmskey s3tests-2) || exit 2
hostport=${endpoint#http://}
cat > "$OUT/s3tests.conf" <<CONF
[DEFAULT]
host = ${hostport%:*}
port = ${hostport##*:}
is_secure = False
ssl_verify = False
[fixtures]
bucket prefix = s3c-{random}-
[s3 main]
display_name = main
user_id = main
email = main@example.com
api_name = us-east-1
access_key = ${ak[main]}
secret_key = ${sk[main]}
kms_keyid = $kms1
kms_keyid2 = $kms2
[s3 alt]
display_name = alt
user_id = alt
email = alt@example.com
access_key = ${ak[alt]}
secret_key = ${sk[alt]}
[s3 tenant]
display_name = tenant
user_id = tenant
email = tenant@example.com
access_key = ${ak[tenant]}
secret_key = ${sk[tenant]}
tenant = tenant
[iam]
email = iam@example.com
user_id = iam
access_key = ${ak[main]}
secret_key = ${sk[main]}
display_name = iam
[iam root]
access_key = ${ak[main]}
secret_key = ${sk[main]}
user_id = main
email = main@example.com
[iam alt root]
access_key = ${ak[alt]}
secret_key = ${sk[alt]}
user_id = alt
email = alt@example.com
CONF

# Arguments that name tests (FILE.py or FILE.py::TEST) replace the two files.
tests=(s3tests/functional/test_s3.py s3tests/functional/test_headers.py)
for a in "$@"; do
  case $a in *.py | *.py::*) tests=() ;; esac
done
started=$SECONDS
(cd "$suite" && S3TEST_CONF=$OUT/s3tests.conf S3_CONFORMANCE_REPORT=$OUT/report.jsonl PYTHONPATH=$here \
  "$VENV/bin/pytest" -p report -q -m "$MARKERS" "${tests[@]}" "$@" \
  > "$OUT/pytest.log" 2>&1)
tail -1 "$OUT/pytest.log"
echo "s3-tests at ${S3TESTS_COMMIT:-$(git -C "$suite" rev-parse --short HEAD 2>/dev/null || echo '?')} took $((SECONDS - started)) s"
"$VENV/bin/python" "$here/summarize.py" "$OUT/report.jsonl"
