#!/usr/bin/env bash
# Before/after comparison of Cairn builds over S3: for each round, each build is started fresh
# (embedded default, temporary data directory) and `cairn bench` runs, with 16 clients, 4 KiB
# PUTs, 4 KiB GETs, 1 MiB PUTs and 1 MiB GETs. Builds alternate within a round, so that machine
# noise falls on both. Prints one line per build, test and round: main-stage ops/s and MB/s,
# p50/p99 ms, and for PUTs the PUTs per WAL fsync (group commit) where the build exports
# cairn_lsm_wal_syncs_total.
#
#   scripts/bench-ab-s3.sh REV_OR_BINARY...      # e.g. 17b2256 HEAD
#
# Environment: ROUNDS (3), DURATION (15s), CONCURRENCY (16), OUT (default
# /var/tmp/cairn-bench-ab/<time>), AB_MODE=local-cluster (a cluster instead of the embedded
# default), TESTS (default "put4k get4k put1m get1m").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ $# -ge 1 ] || { echo "usage: $0 REV_OR_BINARY..." >&2; exit 2; }
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-15s}
CONCURRENCY=${CONCURRENCY:-16}
OUT=${OUT:-/var/tmp/cairn-bench-ab/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
. scripts/ab-lib.sh
ab_build_servers "$@"

walsyncs() { curl -sf "$1/metrics" | awk '/^cairn_lsm_wal_syncs_total/ {s += $2} END {print s + 0}'; }

run() { # label round
  local label=$1 round=$2 data pid ep t s0 s1
  ab_start "$label"
  for t in ${TESTS:-put4k get4k put1m get1m}; do
    local op=(--op put) size=4KiB
    case $t in
      get4k) op=(--op get --objects 1000) ;;
      put1m) size=1MiB ;;
      get1m) op=(--op get --objects 200); size=1MiB ;;
    esac
    s0=$(walsyncs "$ep")
    "$OUT/cairn" bench --endpoint "$ep" --access-key abroot --secret-key "$AB_SECRET" \
      --concurrency "$CONCURRENCY" --bucket "ab-$t" run "${op[@]}" --size "$size" --duration "$DURATION" \
      --json "$OUT/$label-$t-$round.json" >/dev/null 2>"$OUT/$label-$t-$round.err"
    s1=$(walsyncs "$ep")
    python3 - "$OUT/$label-$t-$round.json" "$label" "$t" "$round" "$s0" "$s1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
main = [s for s in d["stages"] if s["kind"] == "main"][0]["total"]
ops = sum(s["total"]["operations"] for s in d["stages"])
syncs = float(sys.argv[6]) - float(sys.argv[5])
per = "%.1f" % (ops / syncs) if syncs > 0 and sys.argv[3].startswith("put") else "-"
print("%-10s %-6s round %s  ops/s %9.1f  MB/s %7.1f  p50 %7.3f ms  p99 %7.3f ms  PUTs/WAL fsync %s" % (
    sys.argv[2], sys.argv[3], sys.argv[4], main["ops_per_sec"], main.get("mb_per_sec", 0),
    main["latency_ms"]["p50"], main["latency_ms"]["p99"], per))
PY
  done
  ab_stop
}
for round in $(seq "$ROUNDS"); do
  for label in "${labels[@]}"; do run "$label" "$round"; done
done | tee "$OUT/summary.txt"
