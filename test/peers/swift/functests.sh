#!/usr/bin/env bash
# Runs OpenStack Swift's own functional tests (Swift 2.30.1's test/functional, which includes
# the boto2/boto3 s3api tests of test/functional/s3api, and test/s3api) against any endpoint
# that offers tempauth-style v1.0 auth and S3 with the users of test.conf.in: the Swift peer
# (setup.sh) or Cairn (scripts/swift-functests.sh starts one and makes the users). No running
# OpenStack Swift is needed to test another server.
#
#   test/peers/swift/functests.sh pypi [FILTER...]   # the pinned test tree (swift-source.txt)
#   test/peers/swift/functests.sh DIR [FILTER...]    # a Swift 2.30 source tree (or its test/)
#   test/peers/swift/functests.sh --prepare [pypi|DIR]  # only make what is missing (below)
#
# FILTER: stestr regular expressions, e.g. test.functional.test_slo.
#
# What it needs, and makes when missing (cached under $CAIRN_CACHE, default .cache):
#   - Debian's python3-swift 2.30.1 (the tests import Swift itself), python3-swiftclient,
#     python3-boto3 and python3-venv: installed with apt-get when root, else it stops;
#   - the test tree: `pypi` takes the source distribution of swift 2.30.1 from the Python
#     package index, checked against the hash in swift-source.txt, and unpacks it once into
#     $CAIRN_CACHE/swift-2.30.1;
#   - a venv of Debian's python3 with --system-site-packages and the test runner (stestr, boto,
#     mock) from requirements.txt, every package pinned by version and hash ($VENV).
#
# Environment: ENDPOINT (default http://127.0.0.1:8080; test.conf is written from test.conf.in
# with it), SWIFT_TEST_CONFIG_FILE (use this test.conf instead), SUITES (default "functional
# s3api"), OUT (logs, subunit streams, test.conf; default a new /tmp/swift-functests.*), VENV
# (default $CAIRN_CACHE/venv-swift), CONCURRENCY (stestr workers, default 1 as upstream: the
# tests share accounts), CAIRN_CACHE.
#
# Prints one line per suite, then "N passed, N failed, N skipped" last. Exit status: 0 when
# every test passed or skipped, 1 when some failed, 2 when the tests could not be run.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cache=${CAIRN_CACHE:-$repo/.cache}
prepare=
if [[ ${1:-} == --prepare ]]; then
  prepare=1
  shift
  set -- "${1:-pypi}"
fi
tree=${1:?usage: functests.sh [--prepare] pypi|SWIFT_TREE [FILTER...]}
shift
py=${PY:-/usr/bin/python3} # Debian's python3, the one with python3-swift
VENV=${VENV:-$cache/venv-swift}
ENDPOINT=${ENDPOINT:-http://127.0.0.1:8080}
SUITES=${SUITES:-functional s3api}
CONCURRENCY=${CONCURRENCY:-1}
fail() { echo "functests.sh: $*" >&2; exit 2; }
mkdir -p "$cache"

# ---- Debian packages
pkgs=(python3-swift python3-swiftclient python3-boto3 python3-venv)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
    fail "missing Debian packages: ${missing[*]} (apt-get install them as root)"
  fi
  echo "functests.sh: apt-get install ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; } ||
    fail "apt-get install ${missing[*]} failed"
fi
swift_version=$("$py" -c 'import swift; print(swift.__version__)') || fail "$py cannot import swift"

# ---- the venv: Debian's Swift and boto3, and the pinned test runner
stamp="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1) $("$py" -c 'import sys; print(sys.version.split()[0])')"
if ! [[ -x $VENV/bin/stestr && -f $VENV/.cairn-stamp && $(cat "$VENV/.cairn-stamp") == "$stamp" ]]; then
  echo "functests.sh: making $VENV" >&2
  rm -rf "$VENV"
  "$py" -m venv --system-site-packages "$VENV" || fail "$py -m venv failed"
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-input --require-hashes --no-deps \
    -r "$here/requirements.txt" || fail "pip install -r $here/requirements.txt failed"
  echo "$stamp" >"$VENV/.cairn-stamp"
fi

# ---- the test tree
if [[ $tree == pypi ]]; then
  pinned=$(sed -n 's/^swift==\([^ ]*\).*/\1/p' "$here/swift-source.txt")
  [[ $swift_version == "$pinned" ]] ||
    fail "Debian's python3-swift is $swift_version but the pinned test tree is $pinned (swift-source.txt)"
  tree=$cache/swift-$pinned
  if [[ ! -f $tree/test/functional/__init__.py ]]; then
    dl=$(mktemp -d)
    # pip checks the archive against the hash in swift-source.txt.
    "$VENV/bin/pip" download -q --disable-pip-version-check --no-input --no-deps --no-binary :all: \
      --require-hashes -r "$here/swift-source.txt" -d "$dl" || fail "could not download swift $pinned's source"
    rm -rf "$tree.tmp"
    mkdir -p "$tree.tmp"
    tar -xzf "$dl/swift-$pinned.tar.gz" -C "$tree.tmp" --strip-components=1 || fail "could not unpack swift-$pinned.tar.gz"
    rm -rf "$dl" "$tree"
    mv "$tree.tmp" "$tree"
    echo "functests.sh: swift $pinned's test tree in $tree" >&2
  fi
fi
tree=$(cd "$tree" && pwd)
[[ $(basename "$tree") == test && -f $tree/functional/__init__.py ]] && tree=$(dirname "$tree")
[[ -f $tree/test/functional/__init__.py ]] || fail "no test/functional under $tree"
if [[ -n $prepare ]]; then
  echo "swift $swift_version (Debian), test tree $tree, venv $VENV"
  exit 0
fi
OUT=${OUT:-$(mktemp -d /tmp/swift-functests.XXXXXX)}
mkdir -p "$OUT"

# ---- test.conf
if [[ -z ${SWIFT_TEST_CONFIG_FILE:-} ]]; then
  SWIFT_TEST_CONFIG_FILE=$OUT/test.conf
  sed -e "s#@ENDPOINT@#${ENDPOINT%/}#g" "$here/test.conf.in" >"$SWIFT_TEST_CONFIG_FILE"
fi
export SWIFT_TEST_CONFIG_FILE
export SWIFT_TEST_IN_PROCESS=0 # never fall back to an in-process Swift
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1

# ---- run
echo "swift $swift_version, tree $tree, endpoint $ENDPOINT, out $OUT"
total_pass=0 total_fail=0 total_skip=0 rc=0
cd "$tree"
for suite in $SUITES; do
  repo_dir=$OUT/stestr-$suite
  rm -rf "$repo_dir"
  mkdir -p "$repo_dir"
  started=$SECONDS
  src=0
  "$VENV/bin/stestr" --repo-url "$repo_dir" --test-path "./test/$suite" --top-dir ./ \
    run --concurrency "$CONCURRENCY" "$@" >"$OUT/$suite.log" 2>&1 || src=$?
  "$VENV/bin/stestr" --repo-url "$repo_dir" last --subunit >"$OUT/$suite.subunit" 2>/dev/null || true
  pass=0 failed=0 skip=0
  read -r pass failed skip < <("$VENV/bin/python" - "$OUT/$suite.subunit" <<'EOF'
import sys
import subunit
import testtools

class Last(testtools.StreamResult):
    def __init__(self):
        super().__init__()
        self.status_of = {}

    def status(self, test_id=None, test_status=None, **kw):
        if test_id and test_status in ("success", "xfail", "fail", "uxsuccess", "skip"):
            self.status_of[test_id] = test_status

r = Last()
try:
    with open(sys.argv[1], "rb") as fh:
        subunit.ByteStreamToStreamResult(fh, non_subunit_name="stdout").run(r)
except Exception as e:
    print("functests.sh: reading %s: %s" % (sys.argv[1], e), file=sys.stderr)
s = list(r.status_of.values())
print(s.count("success") + s.count("xfail"), s.count("fail") + s.count("uxsuccess"), s.count("skip"))
EOF
  ) || true
  # stestr failed but no test did: an import error or the like.
  if ((src != 0 && ${failed:-0} == 0)); then failed=1; fi
  echo "suite $suite: ${pass:-0} passed, ${failed:-0} failed, ${skip:-0} skipped in $((SECONDS - started))s (log $OUT/$suite.log)"
  "$VENV/bin/stestr" --repo-url "$repo_dir" failing --list 2>/dev/null | head -50 | sed 's/^/  FAILED: /' || true
  total_pass=$((total_pass + ${pass:-0})) total_fail=$((total_fail + ${failed:-0})) total_skip=$((total_skip + ${skip:-0}))
  ((src == 0)) || rc=1
done
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
exit "$rc"
