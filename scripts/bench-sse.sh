#!/usr/bin/env bash
# What server-side encryption costs (issue 16; the table in docs/benchmarks.md): 4 KiB and 1 MiB
# PUT and GET with `cairn bench` against one embedded Cairn, into a bucket without encryption
# and ones with default encryption SSE-S3 and SSE-KMS (PutBucketEncryption AES256 / aws:kms, so
# that every object the bench writes is encrypted without the bench sending a header), in turns
# (plain, SSE-S3, SSE-KMS, plain, ...) so that the machine's drift falls on all; medians and
# ratios at the end.
#
#   flock /tmp/cairn-bench.lock scripts/bench-sse.sh
#
# Environment: OUT (default /var/tmp/cairn-bench-sse/<time>), ROUNDS (3), DURATION (10s a
# stage), CONCURRENCY (8).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${OUT:-/var/tmp/cairn-bench-sse/$(date +%Y%m%d-%H%M%S)}
ROUNDS=${ROUNDS:-3} DURATION=${DURATION:-10s} CONCURRENCY=${CONCURRENCY:-8}
. scripts/embedded-lib.sh
start_embedded
"$py" - "$ep" "$ak" "$sk" <<'PY'
import sys, boto3
ep, ak, sk = sys.argv[1:4]
s3 = boto3.client("s3", endpoint_url=ep, aws_access_key_id=ak, aws_secret_access_key=sk, region_name="us-east-1")
for b in ("plain", "sse", "kms"):
    s3.create_bucket(Bucket=b)
s3.put_bucket_encryption(Bucket="sse", ServerSideEncryptionConfiguration={
    "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]})
s3.put_bucket_encryption(Bucket="kms", ServerSideEncryptionConfiguration={
    "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms"}}]})
PY
for r in $(seq "$ROUNDS"); do
    for size in 4KiB 1MiB; do
        objects=1000
        [ "$size" = 1MiB ] && objects=200
        for b in plain sse kms; do
            for op in put get; do
                "$OUT/cairn" bench run --op "$op" --size "$size" --objects "$objects" --bucket "$b" --prefix "r$r-$size-" --concurrency "$CONCURRENCY" \
                    --duration "$DURATION" --seed 1 --json "$OUT/$b-$size-$op-$r.json" >"$OUT/$b-$size-$op-$r.txt" 2>&1
                echo "round $r $size $b $op: $(grep -iE "^ *$op " "$OUT/$b-$size-$op-$r.txt" | tail -1)"
            done
        done
    done
done
"$py" - "$OUT" "$ROUNDS" <<'PY' | tee "$OUT/summary.md"
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def stat(b, size, op, r):
    with open(f"{out}/{b}-{size}-{op}-{r}.json") as f:
        s = json.load(f)["ops"][op]
    return s["ops_per_sec"], s["latency_ms"]["p50"], s.get("errors", 0)
print("| test | plain ops/s (rounds) | SSE-S3 ops/s (rounds) | SSE-KMS ops/s (rounds) | median ratio SSE-S3, SSE-KMS | p50 plain → SSE-S3, SSE-KMS (medians) | errors |")
print("|---|---|---|---|---|---|---|")
for size in ("4KiB", "1MiB"):
    for op in ("put", "get"):
        p = [stat("plain", size, op, r) for r in range(1, rounds + 1)]
        e = [stat("sse", size, op, r) for r in range(1, rounds + 1)]
        k = [stat("kms", size, op, r) for r in range(1, rounds + 1)]
        med = lambda xs, i: statistics.median(x[i] for x in xs)
        errs = sum(x[2] for x in p + e + k)
        fmt = lambda xs: " / ".join(f"{x[0]:,.0f}" for x in xs)
        print(f"| {size} {op.upper()} | {fmt(p)} | {fmt(e)} | {fmt(k)} | **{med(e, 0) / med(p, 0):.2f}**, **{med(k, 0) / med(p, 0):.2f}** | "
              f"{med(p, 1):.2f} → {med(e, 1):.2f}, {med(k, 1):.2f} ms | {errs} |")
PY
echo "done: $OUT"
