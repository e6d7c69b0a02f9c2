#!/usr/bin/env bash
# Runs Cairn's whole test suite: go vet, every Go test (unit, end-to-end against the real
# binary, kill -9 crash test, bench and client against the OpenStack Swift peer when it can
# run here), the real-client tests (boto3, aws cli, s3cmd, rclone, python-swiftclient), then
# OpenStack Swift's own functional tests against Cairn; then the same against a cluster of
# processes (cairn local-cluster) and through a Cairn proxy over the Swift peer's own storage
# servers. Needs nothing beside the repository:
# it installs missing test dependencies first (scripts/install-test-deps.sh) and starts the
# Swift peer with test/peers/swift/setup.sh (docs/testing.md). Prints the time of each step
# ("==> step [seconds since the start]"). Exits non-zero if anything fails.
# Environment: CAIRN_CACHE (default .cache), CAIRN_CRASH_ITERATIONS, PYTEST_ARGS / GO_TEST_ARGS
# to pass extra arguments (e.g. GO_TEST_ARGS=-v, PYTEST_ARGS=-x), CAIRN_TEST_SWIFT_AUTH (test
# against this Swift instead of starting the peer), and, optional, CAIRN_PEERS: another peers
# kit of the same layout (its swift/setup.sh starts the peer instead of test/peers/swift's).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CAIRN_CACHE=${CAIRN_CACHE:-$PWD/.cache}
started=$SECONDS
step() { printf '\n==> %s  [%ds]\n' "$*" "$((SECONDS - started))"; }
failed=()

step "test dependencies"
scripts/install-test-deps.sh

step "Swift peer (OpenStack Swift on 127.0.0.1:8080, test/peers/swift/setup.sh) for the Swift-protocol tests"
# The bench and the client are also tested against a real OpenStack Swift (its native API and
# s3api). setup.sh reuses a Swift that already answers, else installs Debian's and starts it
# (root and apt-get needed: without them it exits 3 and those tests skip, saying why).
peers=${CAIRN_PEERS:-$PWD/test/peers}
if [ -n "${CAIRN_TEST_SWIFT_AUTH:-}" ]; then
  echo "using CAIRN_TEST_SWIFT_AUTH=$CAIRN_TEST_SWIFT_AUTH"
else
  mkdir -p "$CAIRN_CACHE"
  peer_status=0
  if curl -sf -m 3 http://127.0.0.1:8080/info >/dev/null; then
    echo "an OpenStack Swift already answers on 127.0.0.1:8080: using it"
  else
    SWIFT_SKIP_VERIFY=1 "$peers/swift/setup.sh" >"$CAIRN_CACHE/swift-peer.log" 2>&1 || peer_status=$?
  fi
  case $peer_status in
    0)
      export CAIRN_TEST_SWIFT_AUTH=http://127.0.0.1:8080/auth/v1.0
      echo "Swift peer up: $CAIRN_TEST_SWIFT_AUTH"
      ;;
    3) echo "no Swift peer here ($(tail -1 "$CAIRN_CACHE/swift-peer.log")): Swift-protocol tests will skip" ;;
    *) echo "WARNING: the Swift peer did not start (log: $CAIRN_CACHE/swift-peer.log); Swift-protocol tests will skip" ;;
  esac
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

# go test runs in two passes, each with its own -p and -timeout (docs/testing.md, "On a busy
# machine"). The in-process packages (./internal/..., ./cmd/...) run one per core. The packages
# under ./test start real processes (a server, a cluster of five, a kill -9 loop), each of which
# already keeps every core busy, so they run one at a time: side by side on two cores they only
# slowed each other. -timeout is per package, about three times the slowest package's time on a
# loaded 2-core machine, so that a hung test still ends the run well inside CI's limit.
cores=$(nproc 2>/dev/null || echo 2)
go_test_p=${GO_TEST_P:-$cores}
go_test_procs_p=${GO_TEST_PROCS_P:-1}
mapfile -t in_process < <(go list ./... | grep -v '/test/')

step "go test (in-process packages: unit tests; -p $go_test_p)"
# -count=1: the end-to-end tests run a separately built binary, which go test's cache cannot see.
# shellcheck disable=SC2086 # GO_TEST_ARGS is a list of words
go test -count=1 -p "$go_test_p" -timeout 15m ${GO_TEST_ARGS:-} "${in_process[@]}" || failed+=("go test (in-process packages)")

step "go test ./test/... (end-to-end, bad input, crash, cluster; -p $go_test_procs_p)"
# shellcheck disable=SC2086 # GO_TEST_ARGS is a list of words
go test -count=1 -p "$go_test_procs_p" -timeout 40m ${GO_TEST_ARGS:-} ./test/... || failed+=("go test ./test/...")

step "the robustness tier, short profile (test/robustness: 2 minutes of faults, the history checked)"
# Clients on two proxies, a nemesis killing and pausing processes, every answer checked against
# docs/consistency.md's model (docs/testing.md, "The robustness tier"). A new seed each run; a
# failure names it (CAIRN_ROBUSTNESS_SEED repeats its choices).
CAIRN_ROBUSTNESS=short go test -count=1 -run TestRobustness -timeout 20m ./test/robustness/ || failed+=("robustness tier (short)")
step "the robustness tier against the embedded default (1 minute of faults: kill -9 and SIGSTOP of the one process)"
CAIRN_ROBUSTNESS=short CAIRN_ROBUSTNESS_TARGET=embedded CAIRN_ROBUSTNESS_DURATION=1m \
  go test -count=1 -run TestRobustness -timeout 20m ./test/robustness/ || failed+=("robustness tier (embedded)")

step "pytest test/clients (boto3, aws cli, s3cmd, rclone)"
# shellcheck disable=SC2086 # PYTEST_ARGS is a list of words
PATH="$CAIRN_CACHE/venv/bin:$PATH" timeout 40m \
  "$CAIRN_CACHE/venv/bin/python" -m pytest test/clients ${PYTEST_ARGS:-} || failed+=("pytest test/clients")

step "OpenStack Swift's functional tests against Cairn (scripts/swift-functests.sh)"
# Every test OpenStack Swift itself passes on the same test tree must pass on Cairn, except the
# features docs/api.md lists as unsupported (test/swift-functests/expected-failures.txt). The
# test tree and its runner were fetched by install-test-deps.sh; no running Swift is needed.
timeout 40m scripts/swift-functests.sh || failed+=("Swift functional tests")

# The same end-to-end, client and Swift functional tests against a cluster of processes on
# loopback (cairn local-cluster, docs/operations.md "Clusters"): the cluster must behave as the
# single node does, with the same expected failures, but for the Swift tests that need a
# second storage policy, which it has and which must pass there.
cluster="--storage 4 --proxies 1 --policies gold,silver"
step "go test ./test/e2e against a cluster ($cluster)"
CAIRN_TEST_CLUSTER=$cluster go test -count=1 -timeout 30m ./test/e2e/ || failed+=("go test ./test/e2e (cluster)")

step "go test ./test/e2e against two sumo nodes behind a balancer"
CAIRN_TEST_CLUSTER="--sumo 2" go test -count=1 -timeout 30m ./test/e2e/ || failed+=("go test ./test/e2e (sumo)")

step "pytest test/clients against a cluster ($cluster)"
# shellcheck disable=SC2086 # PYTEST_ARGS is a list of words
CAIRN_TEST_CLUSTER=$cluster PATH="$CAIRN_CACHE/venv/bin:$PATH" timeout 40m \
  "$CAIRN_CACHE/venv/bin/python" -m pytest test/clients ${PYTEST_ARGS:-} || failed+=("pytest test/clients (cluster)")

step "OpenStack Swift's functional tests against a cluster ($cluster)"
CAIRN_TEST_CLUSTER=$cluster OUT=$CAIRN_CACHE/swift-functests-cluster timeout 40m scripts/swift-functests.sh ||
  failed+=("Swift functional tests (cluster)")

step "OpenStack Swift's functional tests through a Cairn proxy over the Swift peer's storage servers"
# The proof that Cairn's node protocol is Swift's: a Cairn proxy on the peer's rings
# (/etc/swift) over its object, container and account servers passes what Cairn alone passes.
if [ -n "${CAIRN_TEST_SWIFT_AUTH:-}" ] && [ -f /etc/swift/object.ring.gz ]; then
  CAIRN_TEST_OVER_SWIFT=/etc/swift OUT=$CAIRN_CACHE/swift-functests-over-swift timeout 40m scripts/swift-functests.sh ||
    failed+=("Swift functional tests (Cairn proxy over Swift's servers)")
else
  echo "skipped: no OpenStack Swift peer here (see the Swift peer step)"
fi

step "done"
if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all tests passed in $((SECONDS - started))s"
