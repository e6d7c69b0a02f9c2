#!/usr/bin/env bash
# Side-by-side load runs of Cairn and its peers (MinIO single drive, OpenStack Swift SAIO) with
# the same client (warp) and the same tests, interleaved so that drifts in machine load hit
# every target alike. Results go to docs/benchmarks.md by hand, with this command.
#
#   PEERS=path/to/shared/peers scripts/bench-peers.sh
#
# Optional, and not part of the test suite: it needs a peers kit that is not in the repository
# (the team's ../shared/peers, say), the directory PEERS holding bench/anchors.sh and
# minio/start.sh (see its README for building MinIO and warp). The Swift peer must already run
# (test/peers/swift/setup.sh). Environment: ROUNDS (1), TARGETS ("cairn minio-single swift"), and every
# anchors.sh variable (DURATION, CONCURRENCY, TESTS, ...).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
: "${PEERS:?set PEERS to the peers kit directory (with bench/anchors.sh)}"
ROUNDS=${ROUNDS:-1}
TARGETS=${TARGETS:-cairn minio-single swift}
WORK=${WORK:-/var/tmp/cairn-bench}
RESULTS=${RESULTS:-$WORK/results/run-$(date -u +%Y%m%dT%H%M%SZ)}
SWIFT_RUN_DIR=${SWIFT_RUN_DIR:-/var/run/swift-saio}
MINIO_PIDFILE=${MINIO_PIDFILE:-/var/tmp/cairn-peers/data/minio/run/minio.pid}
mkdir -p "$RESULTS" "$WORK"
go build -o "$WORK/cairn" ./cmd/cairn

run_cairn() { # out
	local data=$WORK/data port=19787 pid
	rm -rf "$data"
	"$WORK/cairn" server --data "$data" --listen 127.0.0.1:$port \
		--root-access-key benchkey --root-secret-key benchsecret --log-level warn >"$WORK/cairn.out" 2>&1 &
	pid=$!
	for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
	SERVER_PIDS=$pid OUTDIR=$1 "$PEERS/bench/anchors.sh" 127.0.0.1:$port benchkey benchsecret cairn || true
	ps -o rss= -p "$pid" | awk '{printf "cairn RSS after the run: %.0f MiB\n", $1/1024}' | tee -a "$1/summary.txt"
	kill "$pid"; wait "$pid" || true
}

for r in $(seq 1 "$ROUNDS"); do
	for t in $TARGETS; do
		out=$RESULTS/$t-r$r
		case $t in
		cairn) run_cairn "$out" ;;
		minio-single)
			"$PEERS/minio/start.sh" stop >/dev/null 2>&1 || true
			MODE=single WIPE=1 "$PEERS/minio/start.sh"
			SERVER_PIDS=$(cat "$MINIO_PIDFILE") OUTDIR=$out "$PEERS/bench/anchors.sh" 127.0.0.1:9000 minioadmin minioadmin "$t" || true
			"$PEERS/minio/start.sh" stop
			;;
		swift)
			SERVER_PIDS=$(cat "$SWIFT_RUN_DIR"/*.pid | paste -sd, -) OUTDIR=$out \
				"$PEERS/bench/anchors.sh" 127.0.0.1:8080 test:tester testing swift || true
			;;
		esac
		cat "$out/summary.txt" >>"$RESULTS/all.txt" 2>/dev/null || true
	done
done
echo "results: $RESULTS/all.txt"
cat "$RESULTS/all.txt"
