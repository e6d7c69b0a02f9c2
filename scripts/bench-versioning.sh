#!/usr/bin/env bash
# What versioning costs (issue 16; the table in docs/benchmarks.md): 4 KiB PUT and GET with
# `cairn bench` against one embedded Cairn, into a bucket without versioning and one with it,
# in turns (plain, versioned, plain new names, plain, ...) so that the machine's drift falls on
# all; then ListObjectVersions of one key with many versions.
#
#   scripts/bench-versioning.sh
#
# Environment: OUT (default /var/tmp/cairn-bench-versioning/<time>), ROUNDS (3), DURATION (15s
# a stage), CONCURRENCY (16), VERSIONS (2000: versions of the one key listed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${OUT:-/var/tmp/cairn-bench-versioning/$(date +%Y%m%d-%H%M%S)}
ROUNDS=${ROUNDS:-3} DURATION=${DURATION:-15s} CONCURRENCY=${CONCURRENCY:-16} VERSIONS=${VERSIONS:-2000}
. scripts/embedded-lib.sh
start_embedded
# The buckets: one plain, one versioned (boto3, as a client would).
"$py" - "$ep" "$ak" "$sk" <<'EOF'
import sys, boto3
ep, ak, sk = sys.argv[1:4]
s3 = boto3.client("s3", endpoint_url=ep, aws_access_key_id=ak, aws_secret_access_key=sk, region_name="us-east-1")
for b in ("plain", "versioned"):
    s3.create_bucket(Bucket=b)
s3.put_bucket_versioning(Bucket="versioned", VersioningConfiguration={"Status": "Enabled"})
EOF
# Each round: PUT then GET of 1,000 names in the plain bucket (PUTs overwrite them) and in the
# versioned one (each PUT keeps a new version), and PUTs of new names in the plain bucket ("new":
# a key space of 10^9, so every PUT keeps its bytes, as a versioned one does).
for r in $(seq "$ROUNDS"); do
    for b in plain versioned new; do
        for op in put get; do
            objects=1000 bucket=$b
            if [ "$b" = new ]; then
                [ "$op" = put ] || continue
                objects=1000000000 bucket=plain
            fi
            "$OUT/cairn" bench run --op "$op" --size 4KiB --objects "$objects" --bucket "$bucket" --prefix "r$r-$b-" --concurrency "$CONCURRENCY" \
                --duration "$DURATION" --seed 1 --json "$OUT/$b-$op-$r.json" >"$OUT/$b-$op-$r.txt" 2>&1
            echo "round $r $b $op: $(grep -iE "^ *$op " "$OUT/$b-$op-$r.txt" | tail -1)"
        done
    done
done
# Per round, versioned ÷ plain and versioned ÷ new names; then their medians over the rounds.
ratios() { # stage op: one ratio per round
    for r in $(seq "$ROUNDS"); do
        v=$(awk -v op="$2" '$1 == op {print $4}' "$OUT/versioned-$2-$r.txt" | tail -1)
        o=$(awk -v op="$2" '$1 == op {print $4}' "$OUT/$1-$2-$r.txt" | tail -1)
        awk -v v="$v" -v o="$o" 'BEGIN { if (o > 0) printf "%.3f\n", v / o }'
    done
}
median() { sort -n | awk '{a[NR] = $1} END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
echo "median versioned/plain: PUT $(ratios plain put | median), GET $(ratios plain get | median); versioned/new names: PUT $(ratios new put | median)"
# Listing the versions of one key with many.
"$py" - "$ep" "$ak" "$sk" "$VERSIONS" <<'EOF' | tee "$OUT/list-versions.txt"
import sys, time, statistics, boto3
ep, ak, sk, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
s3 = boto3.client("s3", endpoint_url=ep, aws_access_key_id=ak, aws_secret_access_key=sk, region_name="us-east-1")
for i in range(n):
    s3.put_object(Bucket="versioned", Key="many", Body=b"v%d" % i)
def page(**kw):
    t = time.perf_counter()
    out = s3.list_object_versions(Bucket="versioned", Prefix="many", **kw)
    return time.perf_counter() - t, out
first = [page(MaxKeys=1000) for _ in range(10)]
out = first[-1][1]
assert len(out["Versions"]) == min(n, 1000)
later = first
if out["IsTruncated"]:
    later = [page(MaxKeys=1000, KeyMarker=out["NextKeyMarker"], VersionIdMarker=out["NextVersionIdMarker"]) for _ in range(10)]
med = lambda xs: statistics.median(x[0] for x in xs) * 1000
print(f"{n} versions of one key: first page of 1000 versions median {med(first):.1f} ms, a later page (version marker) median {med(later):.1f} ms")
t = time.perf_counter(); s3.get_object(Bucket="versioned", Key="many")["Body"].read(); print(f"GET of the current version after {n}: {(time.perf_counter()-t)*1000:.1f} ms")
EOF
echo "done: $OUT"
