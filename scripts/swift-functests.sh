#!/usr/bin/env bash
# Runs OpenStack Swift's own functional test suite (Swift 2.30's test/functional, which includes
# its s3api tests, and test/s3api) against a fresh Cairn, and compares the result with what
# OpenStack Swift itself passes on the same test tree:
#
#   scripts/swift-functests.sh [FILTER...]        # FILTER: stestr regexes, e.g. test.functional.test_dlo
#   scripts/swift-functests.sh --baseline         # record OpenStack Swift's result (needs the Swift peer)
#
# Everything it needs comes from the repository's test/peers/swift/functests.sh, which makes
# what is missing and caches it under $CAIRN_CACHE: Debian's python3-swift 2.30.1 (apt-get, as
# root), the test tree from swift 2.30.1's source distribution on PyPI (pinned by hash) and a
# venv with the test runner (pinned by hash). No running OpenStack Swift is needed, except for
# --baseline (test/peers/swift/setup.sh starts one).
#
# Cairn is started on a loopback port with a temporary data directory, and the tempauth users
# the tests expect are made with `cairn admin` (test:tester/testing and so on). Then
# test/swift-functests/compare.py checks the result: every test that OpenStack Swift passes
# (swift-baseline.txt) must pass on Cairn unless expected-failures.txt names it with a reason.
# Exit status: 0 when that holds, 1 when it does not, 2 when the run could not be made.
#
# Environment: CAIRN_BIN (a built cairn; default: build into $CAIRN_CACHE/bin), CAIRN_CACHE
# (default .cache), OUT (default $CAIRN_CACHE/swift-functests), SUITES (default both), VENV
# (default $CAIRN_CACHE/venv-swift), CAIRN_LOG_LEVEL.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD
cache=${CAIRN_CACHE:-$repo/.cache}
export CAIRN_CACHE=$cache
OUT=${OUT:-$cache/swift-functests}
here=$repo/test/swift-functests
functests=$repo/test/peers/swift/functests.sh
VENV=${VENV:-$cache/venv-swift}
export VENV

# Debian's python3-swift, the test tree and the venv (quick when they are cached).
"$functests" --prepare pypi || exit 2
rm -rf "$OUT"; mkdir -p "$OUT"

if [ "${1:-}" = --baseline ]; then
  shift
  endpoint=${SWIFT_ENDPOINT:-http://127.0.0.1:8080}
  curl -sf -m 3 "$endpoint/info" >/dev/null || { echo "swift-functests: no OpenStack Swift at $endpoint" >&2; exit 2; }
  ENDPOINT=$endpoint OUT=$OUT/run "$functests" pypi "$@" | tail -3
  "$VENV/bin/python" "$here/compare.py" results "$OUT/run" > "$OUT/results.txt" || exit 2
  grep '^success ' "$OUT/results.txt" | cut -d' ' -f2 | sort > "$here/swift-baseline.txt"
  echo "recorded $(wc -l < "$here/swift-baseline.txt") tests that OpenStack Swift passes in $here/swift-baseline.txt"
  exit 0
fi

bin=${CAIRN_BIN:-}
if [ -z "$bin" ]; then
  mkdir -p "$cache/bin"
  go build -o "$cache/bin/cairn" ./cmd/cairn || exit 2
  bin=$cache/bin/cairn
fi
data=$(mktemp -d)
root_ak=functests-root
root_sk=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
# CAIRN_TEST_CLUSTER (e.g. "--storage 4 --proxies 1"): run them against a local cluster of
# processes (cairn local-cluster) instead of one server.
mode=(server)
# shellcheck disable=SC2206 # the topology is a list of words
[ -n "${CAIRN_TEST_CLUSTER:-}" ] && mode=(local-cluster $CAIRN_TEST_CLUSTER)
# CAIRN_TEST_OVER_SWIFT=RINGDIR (e.g. /etc/swift): run them against a Cairn proxy over the
# storage servers of an OpenStack Swift, on its rings (Swift's servers ignore the signature).
if [ -n "${CAIRN_TEST_OVER_SWIFT:-}" ]; then
  mode=(server --role proxy --ring "$CAIRN_TEST_OVER_SWIFT")
  CAIRN_CLUSTER_SECRET=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  export CAIRN_CLUSTER_SECRET
  # The peer is one per machine, and each Cairn proxy over it remakes the tenant store under a
  # secret of its own: wait for any other (test/cluster's TestProxyOverSwift takes the same
  # lock) and hold the lock to the end (the descriptor stays open in this shell and its
  # children).
  exec 9>"${TMPDIR:-/tmp}/cairn-over-swift.lock"
  flock 9
  # The tenant store lives in Swift's servers and outlives the run: start from a new one, as on
  # a fresh Cairn (the store of an earlier run is sealed with its secret and has the users).
  /usr/bin/python3 "$repo/test/peers/swift/forget-cairn-tenants.py" "$CAIRN_TEST_OVER_SWIFT" || exit 2
fi
"$bin" "${mode[@]}" --data "$data" --listen 127.0.0.1:0 --swift-domain "${SWIFT_STORAGE_DOMAIN:-example.net}" --root-access-key "$root_ak" --root-secret-key "$root_sk" --log-level "${CAIRN_LOG_LEVEL:-warn}" \
  > "$OUT/cairn.log" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$data" "$data.master-key"; }
trap cleanup EXIT
# Wait until it prints its endpoint and /healthz answers. The bound only stops a server that will
# never be ready: a loaded machine, or a cluster of processes, may take many times the usual second.
endpoint=
ready=
ready_by=$((SECONDS + 120))
while ((SECONDS < ready_by)); do
  endpoint=$(sed -n 's/^cairn: S3 endpoint \(http[^ ]*\).*/\1/p' "$OUT/cairn.log" | head -1)
  [ -n "$endpoint" ] && curl -sf -m 30 "$endpoint/healthz" >/dev/null && { ready=1; break; }
  kill -0 "$pid" 2>/dev/null || { echo "swift-functests: cairn exited:" >&2; tail -20 "$OUT/cairn.log" >&2; exit 2; }
  sleep 0.1
done
[ -n "$ready" ] || { echo "swift-functests: cairn did not start within 120 s" >&2; tail -20 "$OUT/cairn.log" >&2; exit 2; }
echo "cairn at $endpoint (log $OUT/cairn.log)"
npolicies=$(curl -sf -m 60 "$endpoint/info" | "$VENV/bin/python" -c 'import json, sys; print(len(json.load(sys.stdin)["swift"]["policies"]))') ||
  { echo "swift-functests: cannot read the storage policies from $endpoint/info" >&2; exit 2; }

# tempauth's users as the Swift peer has them (test/peers/swift/setup.sh): account admins, a
# non-admin (tester3), and the service and reseller users, whose special roles Cairn lacks.
adm() {
  "$bin" admin --endpoint "$endpoint" --access-key "$root_ak" --secret-key "$root_sk" "$@" >/dev/null 2>"$OUT/admin.err" ||
    { cat "$OUT/admin.err" >&2; return 1; }
}
for a in test test2 test5 test6; do adm account create "$a" || exit 2; done
mkuser() { # ACCOUNT:USER KEY [--admin]
  adm user create "$1" --user-access-key "$1" --user-secret-key "$2" --user-swift-key "$2" ${3:-} || exit 2
}
mkuser test:tester testing --admin
mkuser test:tester2 testing2 --admin
mkuser test:tester3 testing3
mkuser test2:tester2 testing2 --admin
mkuser test5:tester5 testing5 --admin
mkuser test6:tester6 testing6 --admin
# Over storage that outlives runs (the Swift peer's), start from empty accounts: a run cut short
# leaves uploads and objects the s3api tests' own clean-up cannot page past (non-ASCII names).
if [ -n "${CAIRN_TEST_OVER_SWIFT:-}" ]; then
  "$VENV/bin/python" "$here/empty_accounts.py" "$endpoint" test:tester:testing test:tester2:testing2 \
    test2:tester2:testing2 test5:tester5:testing5 test6:tester6:testing6 ||
    echo "swift-functests: could not empty the test accounts (continuing)" >&2
fi

started=$SECONDS
ENDPOINT=$endpoint OUT=$OUT/run "$functests" pypi "$@" > "$OUT/functests.log" 2>&1
status=$?
tail -1 "$OUT/functests.log"
echo "functional tests took $((SECONDS - started)) s"
if [ "$status" = 2 ]; then
  echo "swift-functests: the tests could not be run ($OUT/functests.log)" >&2
  exit 2
fi
"$VENV/bin/python" "$here/compare.py" results "$OUT/run" > "$OUT/results.txt" || exit 2
filtered=
[ $# -gt 0 ] && filtered=--filtered
# The tests that need a second storage policy skip on a server with one (the single server):
# their expected failures hold only there (lines marked @one-policy).
when=()
[ "$npolicies" -lt 2 ] && when=(--when one-policy)
echo "storage policies in /info: $npolicies"
"$VENV/bin/python" "$here/compare.py" compare $filtered "${when[@]}" "$here/swift-baseline.txt" "$here/expected-failures.txt" "$OUT/results.txt" > "$OUT/compare.txt"
status=$?
cat "$OUT/compare.txt"
if [ "$status" != 0 ]; then
  # Why the first few failed, as the end of the output (CI keeps only that): their
  # tracebacks, and the last warnings Cairn logged; then the verdict again.
  mapfile -t unexpected < <(sed -n 's/^  UNEXPECTED [A-Z]*: //p' "$OUT/compare.txt" | head -4)
  if [ "${#unexpected[@]}" -gt 0 ]; then
    "$VENV/bin/python" "$here/compare.py" details "$OUT/run" "${unexpected[@]}" | cut -c1-300 | tail -n 80
  fi
  echo "---- the last lines Cairn logged ($OUT/cairn.log)"
  tail -n 15 "$OUT/cairn.log" | cut -c1-300
  grep -E '^(Cairn|Of the|  UNEXPECTED)' "$OUT/compare.txt"
fi
exit "$status"
