#!/usr/bin/env bash
# Smoke test of a running OpenStack Swift peer: the Swift API with python-swiftclient's `swift`
# (tempauth v1.0 auth; plain and segmented upload, list, download, delete) and the S3 API
# (s3api) with boto3 (SigV4, path style: bucket, put, get, list, multipart upload, delete).
# Exits non-zero on the first failure.
#
#   test/peers/swift/verify.sh
#
# Environment: SWIFT_ENDPOINT (default http://$SWIFT_IP:$SWIFT_PROXY_PORT), env.sh.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=env.sh
. "$here/env.sh"
endpoint=${SWIFT_ENDPOINT:-http://$SWIFT_IP:$SWIFT_PROXY_PORT}
sw=(swift -A "$endpoint/auth/v1.0" -U test:tester -K testing)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
head -c 3000000 /dev/urandom >blob
container=verify-$$-$RANDOM

"${sw[@]}" stat >/dev/null
"${sw[@]}" upload "$container" blob >/dev/null
"${sw[@]}" upload --segment-size 1000000 --object-name segmented "$container" blob >/dev/null
"${sw[@]}" list "$container" | grep -qx segmented
"${sw[@]}" download "$container" blob -o got >/dev/null
"${sw[@]}" download "$container" segmented -o got-segmented >/dev/null
cmp blob got && cmp blob got-segmented
"${sw[@]}" delete "$container" >/dev/null
"${sw[@]}" delete "${container}_segments" >/dev/null 2>&1 || true
"${sw[@]}" capabilities | grep -q 'middleware: s3api$'
echo "verify: Swift API OK"

"$PY" - "$endpoint" <<'EOF'
import hashlib, sys
import boto3
from botocore.config import Config

s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                  aws_access_key_id="test:tester", aws_secret_access_key="testing",
                  config=Config(s3={"addressing_style": "path"}, signature_version="s3v4"))
bucket = "verify-s3"
try:
    s3.create_bucket(Bucket=bucket)
except s3.exceptions.BucketAlreadyOwnedByYou:
    pass
body = b"hello from boto3 " * 1000
s3.put_object(Bucket=bucket, Key="a/hello", Body=body)
assert s3.get_object(Bucket=bucket, Key="a/hello")["Body"].read() == body
assert "a/hello" in [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
upload = s3.create_multipart_upload(Bucket=bucket, Key="multipart")["UploadId"]
parts, whole = [], b""
for number, size in enumerate([5 << 20, 5 << 20, 12345], 1):
    chunk = bytes([number]) * size
    whole += chunk
    etag = s3.upload_part(Bucket=bucket, Key="multipart", PartNumber=number, UploadId=upload, Body=chunk)["ETag"]
    parts.append({"PartNumber": number, "ETag": etag})
s3.complete_multipart_upload(Bucket=bucket, Key="multipart", UploadId=upload, MultipartUpload={"Parts": parts})
got = s3.get_object(Bucket=bucket, Key="multipart")["Body"].read()
assert hashlib.md5(got).digest() == hashlib.md5(whole).digest(), "multipart object differs"
for key in ("a/hello", "multipart"):
    s3.delete_object(Bucket=bucket, Key=key)
s3.delete_bucket(Bucket=bucket)
print("verify: S3 API OK")
EOF
