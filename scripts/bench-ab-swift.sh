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
go build -o "$OUT/cairn" ./cmd/cairn # the client side (bench, admin) is always this build
labels=()
for spec in "$@"; do
  label=$(basename "$spec")
  if [ -x "$spec" ]; then
    cp "$spec" "$OUT/server-$label"
  else
    wt=$(mktemp -d)
    git worktree add -q --detach "$wt" "$spec"
    (cd "$wt" && go build -o "$OUT/server-$label" ./cmd/cairn)
    git worktree remove --force "$wt"
  fi
  labels+=("$label")
done

run() { # label round
  local label=$1 round=$2 data pid ep key cpu0 cpu1 t
  data=$(mktemp -d /var/tmp/cairn-ab.XXXXXX)
  "$OUT/server-$label" server --data "$data" --listen 127.0.0.1:0 --root-access-key abroot \
    --root-secret-key abroot-secret --log-level warn >"$OUT/$label.log" 2>&1 &
  pid=$!
  ep=
  for _ in $(seq 100); do
    ep=$(sed -n 's/^cairn: S3 endpoint \(http[^ ]*\).*/\1/p' "$OUT/$label.log" | head -1)
    [ -n "$ep" ] && curl -sf -m 1 "$ep/healthz" >/dev/null && break
    sleep 0.1
  done
  adm() { "$OUT/cairn" admin --endpoint "$ep" --access-key abroot --secret-key abroot-secret "$@"; }
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
  kill "$pid"; wait "$pid" 2>/dev/null || true; rm -rf "$data"
}
for round in $(seq "$ROUNDS"); do
  for label in "${labels[@]}"; do run "$label" "$round"; done
done | tee "$OUT/summary.txt"
