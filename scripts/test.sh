#!/usr/bin/env bash
# Runs Cairn's whole test suite: go vet, every Go test (unit, end-to-end against the real
# binary, kill -9 crash test, bench and client against the OpenStack Swift peer when the peers
# kit is present), then the real-client tests (boto3, aws cli, s3cmd, rclone).
# Installs missing test dependencies first (scripts/install-test-deps.sh). Exits non-zero if
# anything fails. Environment: CAIRN_CACHE (default .cache), CAIRN_CRASH_ITERATIONS, and
# PYTEST_ARGS / GO_TEST_ARGS to pass extra arguments (e.g. GO_TEST_ARGS=-v, PYTEST_ARGS=-x).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CAIRN_CACHE=${CAIRN_CACHE:-$PWD/.cache}
started=$SECONDS
step() { printf '\n==> %s  [%ds]\n' "$*" "$((SECONDS - started))"; }
failed=()

step "test dependencies"
scripts/install-test-deps.sh

step "Swift peer (OpenStack Swift SAIO from the peers kit) for the Swift-protocol tests"
# The bench and the client are tested against a real OpenStack Swift when the peers kit is on
# the machine (CAIRN_PEERS, or ../shared/peers beside the checkout) and we are root (its setup
# installs Debian packages and mounts an XFS image). Otherwise those tests skip and say why.
peers=${CAIRN_PEERS:-$PWD/../shared/peers}
if [ -n "${CAIRN_TEST_SWIFT_AUTH:-}" ]; then
  echo "using CAIRN_TEST_SWIFT_AUTH=$CAIRN_TEST_SWIFT_AUTH"
elif [ -x "$peers/swift/setup.sh" ] && [ "$(id -u)" = 0 ]; then
  mkdir -p "$CAIRN_CACHE"
  if curl -sf -m 3 http://127.0.0.1:8080/info >/dev/null ||
     SWIFT_SKIP_VERIFY=1 "$peers/swift/setup.sh" >"$CAIRN_CACHE/swift-peer.log" 2>&1; then
    export CAIRN_TEST_SWIFT_AUTH=http://127.0.0.1:8080/auth/v1.0
    echo "Swift peer up: $CAIRN_TEST_SWIFT_AUTH"
  else
    echo "WARNING: the Swift peer did not start (log: $CAIRN_CACHE/swift-peer.log); Swift-protocol tests will skip"
  fi
else
  echo "no peers kit at $peers (or not root): Swift-protocol tests will skip"
fi
# The HTML report is checked by rendering it in headless Chromium, which install-test-deps.sh
# installed: here its absence is a failure, not a skip.
export CAIRN_REQUIRE_CHROMIUM=1

step "go vet ./..."
go vet ./... || failed+=("go vet")

step "go build ./cmd/cairn"
mkdir -p "$CAIRN_CACHE/bin"
rm -f "$CAIRN_CACHE/bin/cairn"
if go build -o "$CAIRN_CACHE/bin/cairn" ./cmd/cairn; then
  # The Go end-to-end tests and the client tests all run this one build.
  export CAIRN_BIN=$CAIRN_CACHE/bin/cairn
else
  failed+=("go build ./cmd/cairn")
fi

step "go test ./... (unit, end-to-end, crash)"
# -count=1: the end-to-end tests run a separately built binary, which go test's cache cannot see.
# shellcheck disable=SC2086 # GO_TEST_ARGS is a list of words
go test -count=1 -timeout 20m ${GO_TEST_ARGS:-} ./... || failed+=("go test")

step "pytest test/clients (boto3, aws cli, s3cmd, rclone)"
# shellcheck disable=SC2086 # PYTEST_ARGS is a list of words
PATH="$CAIRN_CACHE/venv/bin:$PATH" timeout 20m \
  "$CAIRN_CACHE/venv/bin/python" -m pytest test/clients ${PYTEST_ARGS:-} || failed+=("pytest test/clients")

step "OpenStack Swift's functional tests against Cairn (scripts/swift-functests.sh)"
# Every test OpenStack Swift itself passes on the same test tree must pass on Cairn, except the
# features docs/api.md lists as unsupported (test/swift-functests/expected-failures.txt).
if [ -x "$peers/swift/functests.sh" ]; then
  CAIRN_PEERS=$peers timeout 25m scripts/swift-functests.sh || failed+=("Swift functional tests")
else
  echo "no peers kit at $peers: cannot run Swift's functional tests"
  failed+=("Swift functional tests (no peers kit)")
fi

step "done"
if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all tests passed in $((SECONDS - started))s"
