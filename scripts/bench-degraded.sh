#!/usr/bin/env bash
# Degraded mode, measured (issue 15; the tables in docs/benchmarks.md):
#
#  1. `cairn bench` against a Cairn cluster of 1 proxy + 4 storage processes (3 replicas, as
#     the Swift peer), a stage during which one storage process is killed (kill -9) and later
#     started again by the bench's own events: failed operations (target 0) and throughput
#     before, during and after, from the bench's report.
#  2. Time to restore full redundancy after a disk is replaced: a storage node is stopped, its
#     device emptied, the node started again, and the other nodes' replicators rebuild it; the
#     same on the OpenStack Swift peer (its node 2's object device emptied, Swift's object
#     replicators and rsync rebuild it). Reported as seconds and seconds per GB rebuilt.
#
#   scripts/bench-degraded.sh
#
# Environment: OUT (default /var/tmp/cairn-bench-degraded/<time>), FILL_OBJECTS (2000) and
# FILL_SIZE (256KiB) for the data the rebuild moves, DURATION (60s: the failover stage),
# SKIP_SWIFT=1 to leave the Swift peer out, PEERS as in bench-swift.sh. Swift needs root (its
# daemons run as the swift user, its devices are a loopback XFS image).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# A node is started again with the command line the launcher wrote for it, in the background,
# and its pid file updated (the launcher does not watch a node it did not start). The bench's
# start event calls this script so: --start-node DIR NAME.
start_node() { # DIR NAME
    local a addr secret
    mapfile -t a <"$1/$2.args"
    secret=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['cluster_secret'])" "$1/cluster.json")
    CAIRN_CLUSTER_SECRET=$secret setsid "${a[@]}" >>"$1/$2.log" 2>&1 </dev/null &
    echo $! >"$1/$2.pid"
    addr=$(python3 -c "import json,sys; print([n['addr'] for n in json.load(open(sys.argv[1]))['nodes'] if n['name']==sys.argv[2]][0])" "$1/cluster.json" "$2")
    for _ in $(seq 150); do
        curl -sf -m 1 "http://$addr/healthz" >/dev/null && return
        sleep 0.2
    done
    echo "$2 did not come back" >&2
    return 1
}
if [ "${1:-}" = --start-node ]; then
    start_node "$2" "$3"
    exit
fi

PEERS=${PEERS:-$PWD/test/peers}
OUT=${OUT:-/var/tmp/cairn-bench-degraded/$(date -u +%Y%m%dT%H%M%SZ)}
FILL_OBJECTS=${FILL_OBJECTS:-2000}
FILL_SIZE=${FILL_SIZE:-256KiB}
DURATION=${DURATION:-60s}
mkdir -p "$OUT"
go build -o "$OUT/cairn" ./cmd/cairn
CAIRN=$OUT/cairn

# ---- the Cairn cluster, its replicators looking every second (so that the measurement is of
# the rebuild, not of the wait for the next pass; Swift's replicators below run back to back)
dir=$(mktemp -d /var/tmp/cairn-degraded.XXXXXX)
"$CAIRN" local-cluster --data "$dir" --listen 127.0.0.1:0 --root-access-key degradedroot \
    --root-secret-key degradedroot-secret --replication-interval 1s --log-level warn \
    >"$OUT/cluster.log" 2>"$OUT/cluster.err" &
cluster_pid=$!
cleanup() {
    set +e
    kill "$(cat "$dir/storage2.pid")" 2>/dev/null # started again by this script, not the launcher
    kill $cluster_pid 2>/dev/null; wait $cluster_pid 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
ep=
for _ in $(seq 300); do
    ep=$(sed -n 's/^cairn: S3 endpoint \(http[^ ]*\).*/\1/p' "$OUT/cluster.log" | head -1)
    [ -n "$ep" ] && break
    sleep 0.2
done
[ -n "$ep" ] || { cat "$OUT/cluster.err"; exit 1; }
creds=(--endpoint "$ep" --access-key degradedroot --secret-key degradedroot-secret)

metric_sum() { # NAME: the sum over the storage nodes of a metric's samples
    python3 - "$dir/cluster.json" "$1" <<'EOF'
import json, sys, urllib.request
total = 0.0
for n in json.load(open(sys.argv[1]))["nodes"]:
    if n["role"] == "proxy":
        continue
    try:
        body = urllib.request.urlopen(f"http://{n['addr']}/metrics", timeout=5).read().decode()
    except OSError:
        continue
    for line in body.splitlines():
        if line.startswith(sys.argv[2] + " ") or line.startswith(sys.argv[2] + "{"):
            total += float(line.rsplit(" ", 1)[1])
print(total)
EOF
}

# ---- 1. the bench, a node killed and started again in the middle
cat >"$OUT/failover.yaml" <<EOF
name: failover
objects: 2000
size: {min: 4KiB, max: 256KiB}
mix: {get: 80, put: 15, delete: 5}
concurrency: 16
stages:
  - {name: fill, kind: prepare, concurrency: 32}
  - name: failover
    duration: $DURATION
    events:
      - {name: kill-storage2, at: 15s, command: "kill -9 \$(cat $dir/storage2.pid)"}
      - {name: start-storage2, at: 35s, command: "$PWD/scripts/bench-degraded.sh --start-node $dir storage2", timeout: 60s}
EOF
echo "# $(date -u +%FT%TZ) cairn $(git rev-parse --short HEAD)" | tee "$OUT/results.txt"
"$CAIRN" bench run "${creds[@]}" --workload "$OUT/failover.yaml" --bucket failover \
    --json "$OUT/failover.json" --html "$OUT/failover.html" >"$OUT/failover.txt" 2>&1 ||
    echo "bench: exit $? (failed operations; see $OUT/failover.txt)" | tee -a "$OUT/results.txt"
python3 - "$OUT/failover.json" <<'EOF' | tee -a "$OUT/results.txt"
import json, sys
r = json.load(open(sys.argv[1]))
for st in r.get("stages", []):
    if st.get("name") != "failover":
        continue
    t = st.get("total", {})
    print(f"failover stage: {t.get('operations', 0)} operations, {t.get('errors', 0)} errors, {t.get('ops_per_sec', 0):.0f} ops/s, p99 {t.get('latency_ms', {}).get('p99', 0):.1f} ms")
    for ev in st.get("events", []):
        line = [f"event {ev['name']} at {ev.get('at')} (exit {ev.get('exit_code')})"]
        for name in ("before", "during", "after"):
            p = ev.get(name) or {}
            line.append(f"{name}: {p.get('operations', 0)} ops, {p.get('errors', 0)} errors, {p.get('ops_per_sec', 0):.0f} ops/s")
        line.append(f"dip {ev.get('dip_pct', 0):.0f}%, recovered after {ev.get('recovered_after', '-')} s")
        print("; ".join(line))
EOF

# ---- 2. Cairn: a replaced disk rebuilt by the replicators
"$CAIRN" bench fill "${creds[@]}" --bucket rebuild --objects "$FILL_OBJECTS" --size "$FILL_SIZE" --concurrency 16 \
    >"$OUT/fill-cairn.txt" 2>&1
sleep 5 # the last writes' listing updates
kill "$(cat "$dir/storage2.pid")" || true; sleep 2
rm -rf "$dir/storage2/devices"
b0=$(metric_sum cairn_replication_pushed_bytes_total); p0=$(metric_sum cairn_replication_pushed_total)
t0=$(date +%s.%N)
start_node "$dir" storage2
last=$t0 lastp=$p0 stable=0
while :; do
    sleep 0.5
    p=$(metric_sum cairn_replication_pushed_total)
    if python3 -c "import sys; sys.exit(0 if float('$p') > float('$lastp') else 1)"; then
        last=$(date +%s.%N) lastp=$p stable=0
    else
        stable=$((stable + 1))
    fi
    [ $stable -ge 10 ] && [ "$(metric_sum cairn_replication_handoff_partitions)" = "0.0" ] && break
done
b1=$(metric_sum cairn_replication_pushed_bytes_total)
python3 - "$t0" "$last" "$b0" "$b1" "$p0" "$lastp" <<'EOF' | tee -a "$OUT/results.txt"
import sys
t0, t1, b0, b1, p0, p1 = map(float, sys.argv[1:])
gb = (b1 - b0) / 1e9
print(f"cairn: rebuilt {p1-p0:.0f} objects, {gb:.3f} GB in {t1-t0:.1f} s: {(t1-t0)/max(gb,1e-9):.1f} s per GB")
EOF

# ---- 3. Swift: the same on the peer, with its own replicators (back to back) and rsync
if [ "${SKIP_SWIFT:-}" != 1 ]; then
    curl -sf -m 5 http://127.0.0.1:8080/info >/dev/null || SWIFT_SKIP_VERIFY=1 "$PEERS/swift/setup.sh"
    # shellcheck source=/dev/null
    . "$PEERS/swift/env.sh"
    swift=(--protocol swift --auth-url http://127.0.0.1:8080/auth/v1.0 --user admin:admin --key admin)
    "$CAIRN" bench fill "${swift[@]}" --bucket rebuild --objects "$FILL_OBJECTS" --size "$FILL_SIZE" --concurrency 16 \
        >"$OUT/fill-swift.txt" 2>&1
    dev=$(ls -d "${SWIFT_NODE_PREFIX}2"/sdb2)
    count() { find "$dev/objects" -name '*.data' 2>/dev/null | wc -l; }
    before=$(count); bytes=$(du -sb "$dev/objects" | cut -f1)
    start-stop-daemon --start --quiet --background --make-pidfile --pidfile "$SWIFT_RUN_DIR/rsyncd.pid" \
        --startas /usr/bin/rsync -- --daemon --no-detach --config="$SWIFT_CONF_DIR/rsyncd-saio.conf" || true
    kill "$(cat "$SWIFT_RUN_DIR/object-server-2.pid")"; sleep 2
    rm -rf "$dev/objects"
    t0=$(date +%s.%N)
    "$PEERS/swift/start.sh" >/dev/null
    loops=()
    for n in 1 2 3 4; do
        (while :; do runuser -u "$SWIFT_USER" -- swift-object-replicator "$SWIFT_CONF_DIR/object-server/$n.conf" once >>"$OUT/swift-replicator-$n.log" 2>&1 || sleep 1; done) &
        loops+=($!)
    done
    while [ "$(count)" -lt "$before" ]; do sleep 0.5; done
    t1=$(date +%s.%N)
    kill "${loops[@]}" 2>/dev/null; pkill -f swift-object-replicator || true
    python3 - "$t0" "$t1" "$bytes" "$before" <<'EOF' | tee -a "$OUT/results.txt"
import sys
t0, t1, b, n = map(float, sys.argv[1:])
gb = b / 1e9
print(f"swift: rebuilt {n:.0f} objects, {gb:.3f} GB in {t1-t0:.1f} s: {(t1-t0)/max(gb,1e-9):.1f} s per GB")
EOF
    "$CAIRN" rm --recursive --bucket --concurrency 16 "${swift[@]}" rebuild >/dev/null 2>&1 || true
fi
echo "results in $OUT/results.txt"
