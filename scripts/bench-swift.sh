#!/usr/bin/env bash
# One interleaved run of `cairn bench` against Cairn (embedded, S3) and the OpenStack Swift peer
# (its native Swift API and its s3api), same tool, same workloads, same machine, then the
# bench's own client cost against warp's on the same target. Writes JSON per run and a
# markdown summary (summary.md) to $OUT. Used for the tables in docs/benchmarks.md.
#
#   scripts/bench-swift.sh
#
# The Swift peer is the repository's: test/peers/swift/setup.sh reuses a Swift that already
# answers on 127.0.0.1:8080, else installs and starts one (root). Environment: PEERS (optional:
# another peers kit of the same layout, such as the team's ../shared/peers, whose swift/setup.sh
# is used instead), OUT (default /var/tmp/cairn-bench-swift/<time>), DURATION (20s), CONCURRENCY
# (16), TESTS (put4k get4k put1m get1m A D), TARGETS (cairn swift swift-s3; also cluster: a
# Cairn cluster of 1 proxy + 4 storage processes, and over-swift: a Cairn proxy on the Swift
# peer's rings over its storage servers), WARP (optional:
# a built warp, default /var/tmp/cairn-peers/bin/warp; the warp comparison is skipped when it
# is missing), D_OBJECTS (20: workload D's objects are 1-128 MiB and Swift keeps three replicas
# on an 8 GiB image), SWIFT_USER and SWIFT_KEY (test:tester, testing).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PEERS=${PEERS:-$PWD/test/peers}
OUT=${OUT:-/var/tmp/cairn-bench-swift/$(date -u +%Y%m%dT%H%M%SZ)}
DURATION=${DURATION:-20s}
CONCURRENCY=${CONCURRENCY:-16}
TESTS=${TESTS:-put4k get4k put1m get1m A D}
TARGETS=${TARGETS:-cairn swift swift-s3}
WARP=${WARP:-/var/tmp/cairn-peers/bin/warp}
D_OBJECTS=${D_OBJECTS:-20}
# The Swift user the bench acts as (admin:admin is out of the way of Swift's functional tests,
# which empty the test accounts).
SWIFT_USER=${SWIFT_USER:-test:tester} SWIFT_KEY=${SWIFT_KEY:-testing}
mkdir -p "$OUT"

go build -o "$OUT/cairn" ./cmd/cairn
CAIRN=$OUT/cairn
data=$(mktemp -d /var/tmp/cairn-bench-data.XXXXXX)
"$CAIRN" server --data "$data" --listen 127.0.0.1:0 --root-access-key benchroot \
    --root-secret-key benchroot-secret >"$OUT/server.log" 2>&1 &
cairn_pid=$!
trap 'kill $cairn_pid 2>/dev/null; wait $cairn_pid 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 50); do
    ep=$(sed -n 's/^cairn: S3 endpoint \(http[^ ]*\).*/\1/p' "$OUT/server.log" | head -1)
    [ -n "$ep" ] && break
    sleep 0.2
done
[ -n "$ep" ] || { cat "$OUT/server.log"; exit 1; }
curl -sf -m 5 http://127.0.0.1:8080/info >/dev/null || SWIFT_SKIP_VERIFY=1 "$PEERS/swift/setup.sh"

# Optional targets: a Cairn cluster of processes (1 proxy + 4 storage nodes, 3 replicas, as the
# SAIO: `cairn local-cluster`), and a Cairn proxy over the Swift peer's own storage servers.
cluster_pid= over_pid= cep= oep=
wait_endpoint() { # LOG: prints the endpoint a process wrote there
    for _ in $(seq 300); do
        e=$(sed -n 's/^cairn: S3 endpoint \(http[^ ]*\).*/\1/p' "$1" | head -1)
        [ -n "$e" ] && { echo "$e"; return; }
        sleep 0.2
    done
    cat "$1" >&2; exit 1
}
if [[ " $TARGETS " == *" cluster "* ]]; then
    cdata=$(mktemp -d /var/tmp/cairn-bench-cluster.XXXXXX)
    "$CAIRN" local-cluster --data "$cdata" --listen 127.0.0.1:0 --root-access-key benchroot \
        --root-secret-key benchroot-secret >"$OUT/cluster.log" 2>"$OUT/cluster.err" &
    cluster_pid=$!
    cep=$(wait_endpoint "$OUT/cluster.log")
fi
if [[ " $TARGETS " == *" over-swift "* ]]; then
    # A new secret needs a new tenant store (an earlier one in Swift's servers is sealed with
    # another secret).
    /usr/bin/python3 test/peers/swift/forget-cairn-tenants.py /etc/swift
    CAIRN_CLUSTER_SECRET=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n') "$CAIRN" server --role proxy \
        --ring /etc/swift --data "$data/over-swift" --listen 127.0.0.1:0 --root-access-key benchroot \
        --root-secret-key benchroot-secret >"$OUT/over-swift.log" 2>&1 &
    over_pid=$!
    oep=$(wait_endpoint "$OUT/over-swift.log")
fi
trap 'kill $cairn_pid $cluster_pid $over_pid 2>/dev/null; wait $cairn_pid $cluster_pid $over_pid 2>/dev/null; rm -rf "$data" "${cdata:-}"' EXIT

# CPU seconds (user+system) used so far by a set of processes.
cpu_of() { python3 - "$@" <<'EOF'
import os, sys
hz = os.sysconf("SC_CLK_TCK"); total = 0
for pid in sys.argv[1:]:
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        total += int(f[11]) + int(f[12])
    except OSError:
        pass
print(f"{total / hz:.2f}")
EOF
}
server_pids() {
    case $1 in
    cairn) echo "$cairn_pid";;
    cluster) echo "$cluster_pid $(pgrep -d ' ' -P "$cluster_pid")";;
    over-swift) echo "$over_pid $(pgrep -d ' ' -f 'swift-(object|container|account)-server')";;
    *) pgrep -d ' ' -f 'swift-(proxy|object|container|account)-server|memcached' || true;;
    esac
}
target_args() {
    case $1 in
    cairn) echo "--endpoint $ep --access-key benchroot --secret-key benchroot-secret";;
    cluster) echo "--endpoint $cep --access-key benchroot --secret-key benchroot-secret";;
    over-swift) echo "--endpoint $oep --access-key benchroot --secret-key benchroot-secret";;
    swift) echo "--protocol swift --auth-url http://127.0.0.1:8080/auth/v1.0 --user $SWIFT_USER --key $SWIFT_KEY";;
    swift-s3) echo "--endpoint http://127.0.0.1:8080 --access-key $SWIFT_USER --secret-key $SWIFT_KEY";;
    esac
}
test_args() {
    case $1 in
    put4k) echo "--op put --size 4KiB";;
    get4k) echo "--op get --size 4KiB --objects 500";;
    put1m) echo "--op put --size 1MiB";;
    get1m) echo "--op get --size 1MiB --objects 100";;
    A) echo "--workload A --objects 500";;
    D) echo "--workload D --objects $D_OBJECTS";;
    esac
}

echo "# $(date -u +%FT%TZ) cairn $(git rev-parse --short HEAD) duration=$DURATION concurrency=$CONCURRENCY" | tee "$OUT/runs.tsv"
for t in $TESTS; do
    for target in $TARGETS; do
        pids=$(server_pids "$target")
        c0=$(cpu_of $pids)
        # shellcheck disable=SC2046 # the argument lists are words
        "$CAIRN" bench run $(target_args "$target") $(test_args "$t") --bucket "cb-$target-$(echo "$t" | tr A-Z a-z)" \
            --duration "$DURATION" --concurrency "$CONCURRENCY" --json "$OUT/$target-$t.json" \
            >"$OUT/$target-$t.txt" 2>&1 || echo "$target $t: exit $? (see $OUT/$target-$t.txt)"
        c1=$(cpu_of $pids)
        printf '%s\t%s\t%s\n' "$target" "$t" "$(python3 -c "print(round($c1-$c0,2))")" | tee -a "$OUT/runs.tsv"
        # Empty the bucket with Cairn's own client, so that Swift's 8 GiB image never fills
        # (three replicas of workload D's objects are several GiB).
        # shellcheck disable=SC2046
        "$CAIRN" rm --recursive --bucket --concurrency 16 $(target_args "$target") "cb-$target-$(echo "$t" | tr A-Z a-z)" \
            >/dev/null 2>&1 || echo "$target $t: cleanup failed"
    done
done

if [ -x "$WARP" ]; then
    # The client's cost: cairn bench and warp against the same Cairn, same load. warp's CPU is
    # taken from the kernel's accounting of its process (it has no report of its own).
    for t in get4k put4k; do
        case $t in
        get4k) wargs=(get --obj.size 4KiB --objects 500); cargs=(--op get --size 4KiB --objects 500);;
        put4k) wargs=(put --obj.size 4KiB); cargs=(--op put --size 4KiB);;
        esac
        "$CAIRN" bench run --endpoint "$ep" --access-key benchroot --secret-key benchroot-secret "${cargs[@]}" \
            --bucket "cw-$t" --duration "$DURATION" --concurrency "$CONCURRENCY" --json "$OUT/client-cairn-$t.json" \
            >"$OUT/client-cairn-$t.txt" 2>&1 || true
        /usr/bin/time -f '%U %S' -o "$OUT/client-warp-$t.time" "$WARP" "${wargs[@]}" --host "${ep#http://}" \
            --access-key benchroot --secret-key benchroot-secret --lookup path --concurrent "$CONCURRENCY" \
            --duration "$DURATION" --bucket "ww-$t" --disable-sha256-payload --noclear --no-color \
            --benchdata "$OUT/warp-$t" \
            >"$OUT/client-warp-$t.txt" 2>&1 </dev/null || true
    done
fi
python3 scripts/bench-summary.py "$OUT" | tee "$OUT/summary.md"
