#!/usr/bin/env bash
# Before/after comparison of Cairn builds over the Swift API: for each round, each build is
# started fresh (embedded default, temporary data directory), a Swift user is made with
# `cairn admin`, and `cairn bench --protocol swift` runs 4 KiB PUTs, then 4 KiB GETs of 500
# objects. Builds alternate within a round, so that machine noise falls on both. Prints one line
# per build, test and round: main-stage ops/s, p50/p99 ms, and the server's CPU seconds per 1,000
# requests (prepare stage included).
#
#   scripts/bench-ab-swift.sh REV_OR_BINARY...      # e.g. a28bb3a HEAD
#
# Environment: ROUNDS (3), DURATION (15s), OUT (default /var/tmp/cairn-bench-ab/<time>).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ $# -ge 1 ] || { echo "usage: $0 REV_OR_BINARY..." >&2; exit 2; }
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-15s}
OUT=${OUT:-/var/tmp/cairn-bench-ab/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
. scripts/ab-lib.sh
ab_build_servers "$@"

run() { # label round
  local label=$1 round=$2 data pid ep key cpu0 cpu1 t
  ab_start "$label"
  adm() { "$OUT/cairn" admin --endpoint "$ep" --access-key abroot --secret-key "$AB_SECRET" "$@"; }
  adm account create bench >/dev/null
  key=$(adm user create bench:b --admin --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["swift_key"])')
  for t in put4k get4k; do
    cpu0=$(awk '{print $14+$15}' "/proc/$pid/stat")
    local op=(--op put) ; [ "$t" = get4k ] && op=(--op get --objects 500)
    "$OUT/cairn" bench --protocol swift --auth-url "$ep/auth/v1.0" --user bench:b --key "$key" \
      --bucket "ab-$t" run "${op[@]}" --size 4KiB --duration "$DURATION" \
      --json "$OUT/$label-$t-$round.json" >/dev/null 2>"$OUT/$label-$t-$round.err"
    cpu1=$(awk '{print $14+$15}' "/proc/$pid/stat")
    python3 - "$OUT/$label-$t-$round.json" "$label" "$t" "$round" "$cpu0" "$cpu1" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
main = [s for s in d["stages"] if s["kind"] == "main"][0]["total"]
ops = sum(s["total"]["operations"] for s in d["stages"])
cpu = (float(sys.argv[6]) - float(sys.argv[5])) / os.sysconf("SC_CLK_TCK")
print("%-10s %-6s round %s  ops/s %9.1f  p50 %6.3f ms  p99 %6.3f ms  server CPU s/1k req %.4f" % (
    sys.argv[2], sys.argv[3], sys.argv[4], main["ops_per_sec"], main["latency_ms"]["p50"],
    main["latency_ms"]["p99"], cpu / ops * 1000))
PY
  done
  ab_stop
}
for round in $(seq "$ROUNDS"); do
  for label in "${labels[@]}"; do run "$label" "$round"; done
done | tee "$OUT/summary.txt"
