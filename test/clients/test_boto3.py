"""boto3 (newest, default settings: CRC32 request checksums when supported) against cairn."""

import hashlib
import os
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from xml.etree import ElementTree

import boto3
import pytest
import requests
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError

from cairntest import bucket_listing, sha256_file

KiB, MiB = 1 << 10, 1 << 20


def code_of(excinfo):
    return excinfo.value.response["Error"]["Code"]


def status_of(excinfo):
    return excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"]


def test_bucket_create_list_delete(s3):
    name = "boto3-bucket-" + os.urandom(3).hex()
    s3.create_bucket(Bucket=name)
    assert name in [b["Name"] for b in s3.list_buckets()["Buckets"]]
    s3.head_bucket(Bucket=name)
    s3.delete_bucket(Bucket=name)
    assert name not in [b["Name"] for b in s3.list_buckets()["Buckets"]]
    with pytest.raises(ClientError) as e:
        s3.head_bucket(Bucket=name)
    assert status_of(e) == 404


def test_put_get_metadata_and_content_type(s3, bucket):
    sent = []
    s3.meta.events.register("before-send.s3.PutObject", lambda request, **kw: sent.append(dict(request.headers)))
    body = os.urandom(100 * KiB + 7)
    put = s3.put_object(Bucket=bucket, Key="dir/meta.bin", Body=body, ContentType="image/x-cairn",
                        Metadata={"owner": "alice", "purpose": "round-trip"}, CacheControl="max-age=60")
    # boto3's default (request_checksum_calculation=when_supported) sends a CRC32.
    headers = {k.lower(): (v.decode() if isinstance(v, bytes) else v) for k, v in sent[-1].items()}
    assert "x-amz-checksum-crc32" in headers or "x-amz-checksum-crc32" in headers.get("x-amz-trailer", ""), headers
    assert put["ETag"].strip('"') == hashlib.md5(body).hexdigest()

    got = s3.get_object(Bucket=bucket, Key="dir/meta.bin", ChecksumMode="ENABLED")
    assert got["Body"].read() == body
    assert got["ContentType"] == "image/x-cairn"
    assert got["Metadata"] == {"owner": "alice", "purpose": "round-trip"}
    assert got["CacheControl"] == "max-age=60"
    assert got["ContentLength"] == len(body)

    head = s3.head_object(Bucket=bucket, Key="dir/meta.bin")
    assert head["ContentLength"] == len(body)
    assert head["ETag"] == put["ETag"]
    assert head["ContentType"] == "image/x-cairn"
    assert head["Metadata"] == {"owner": "alice", "purpose": "round-trip"}

    # Empty object and a key with characters that need encoding.
    s3.put_object(Bucket=bucket, Key="empty", Body=b"")
    assert s3.get_object(Bucket=bucket, Key="empty")["Body"].read() == b""
    odd = "odd key/ü+ä=%20&?#.txt"
    s3.put_object(Bucket=bucket, Key=odd, Body=b"odd")
    assert s3.get_object(Bucket=bucket, Key=odd)["Body"].read() == b"odd"
    assert odd in bucket_listing(s3, bucket)


def test_ranges(s3, bucket):
    body = os.urandom(10_000)
    s3.put_object(Bucket=bucket, Key="r", Body=body)
    for rng, want in [("bytes=0-9", body[:10]), ("bytes=100-199", body[100:200]), ("bytes=9990-", body[9990:]),
                      ("bytes=-5", body[-5:]), ("bytes=9995-20000", body[9995:])]:
        got = s3.get_object(Bucket=bucket, Key="r", Range=rng)
        assert got["Body"].read() == want, rng
        assert got["ResponseMetadata"]["HTTPStatusCode"] == 206, rng
        assert got["ContentLength"] == len(want), rng
        assert got["ContentRange"].startswith("bytes "), rng
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="r", Range="bytes=20000-30000")
    assert code_of(e) == "InvalidRange" and status_of(e) == 416


def test_copy_with_metadata_directive(s3, bucket):
    body = os.urandom(5000)
    s3.put_object(Bucket=bucket, Key="src", Body=body, ContentType="text/x-src", Metadata={"a": "1"})
    s3.copy_object(Bucket=bucket, Key="copy-keep", CopySource={"Bucket": bucket, "Key": "src"})
    keep = s3.get_object(Bucket=bucket, Key="copy-keep")
    assert keep["Body"].read() == body
    assert keep["Metadata"] == {"a": "1"} and keep["ContentType"] == "text/x-src"

    s3.copy_object(Bucket=bucket, Key="copy-replace", CopySource={"Bucket": bucket, "Key": "src"},
                   MetadataDirective="REPLACE", Metadata={"b": "2"}, ContentType="text/x-new")
    rep = s3.get_object(Bucket=bucket, Key="copy-replace")
    assert rep["Body"].read() == body
    assert rep["Metadata"] == {"b": "2"} and rep["ContentType"] == "text/x-new"

    # Copy onto itself with REPLACE updates the metadata only.
    s3.copy_object(Bucket=bucket, Key="src", CopySource={"Bucket": bucket, "Key": "src"},
                   MetadataDirective="REPLACE", Metadata={"c": "3"})
    self_copy = s3.get_object(Bucket=bucket, Key="src")
    assert self_copy["Body"].read() == body and self_copy["Metadata"] == {"c": "3"}

    # Across buckets.
    other = bucket[:50] + "-dst"
    s3.create_bucket(Bucket=other)
    s3.copy_object(Bucket=other, Key="x/y", CopySource={"Bucket": bucket, "Key": "copy-keep"})
    assert s3.get_object(Bucket=other, Key="x/y")["Body"].read() == body


def test_list_objects_v2_paging_delimiter_prefix(s3, bucket):
    keys = sorted([f"a/{i:02d}" for i in range(7)] + [f"b/c/{i}" for i in range(3)] + ["b/d", "top1", "top2"])
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=k.encode())

    # Paging with MaxKeys and continuation tokens.
    seen, token, pages = [], None, 0
    while True:
        kw = {"ContinuationToken": token} if token else {}
        page = s3.list_objects_v2(Bucket=bucket, MaxKeys=5, **kw)
        pages += 1
        seen += [o["Key"] for o in page.get("Contents", [])]
        assert page["KeyCount"] == len(page.get("Contents", []))
        if not page["IsTruncated"]:
            break
        token = page["NextContinuationToken"]
        assert pages < 10
    assert seen == keys and pages == 3

    root = s3.list_objects_v2(Bucket=bucket, Delimiter="/")
    assert [o["Key"] for o in root["Contents"]] == ["top1", "top2"]
    assert [p["Prefix"] for p in root["CommonPrefixes"]] == ["a/", "b/"]

    b = s3.list_objects_v2(Bucket=bucket, Prefix="b/", Delimiter="/")
    assert [o["Key"] for o in b["Contents"]] == ["b/d"]
    assert [p["Prefix"] for p in b["CommonPrefixes"]] == ["b/c/"]

    a = s3.list_objects_v2(Bucket=bucket, Prefix="a/", StartAfter="a/03")
    assert [o["Key"] for o in a["Contents"]] == ["a/04", "a/05", "a/06"]
    sizes = {o["Key"]: o["Size"] for o in a["Contents"]}
    assert sizes == {"a/04": 4, "a/05": 4, "a/06": 4}

    # Delimiter with paging: common prefixes count against MaxKeys and are not repeated.
    seen_prefixes, seen_keys, token = [], [], None
    for _ in range(10):
        kw = {"ContinuationToken": token} if token else {}
        page = s3.list_objects_v2(Bucket=bucket, Delimiter="/", MaxKeys=1, **kw)
        seen_prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
        seen_keys += [o["Key"] for o in page.get("Contents", [])]
        if not page["IsTruncated"]:
            break
        token = page["NextContinuationToken"]
    assert seen_prefixes == ["a/", "b/"] and seen_keys == ["top1", "top2"]

    assert s3.list_objects_v2(Bucket=bucket, Prefix="nothing/").get("Contents", []) == []

    # ListObjects (v1) with marker still works: some clients use it.
    v1 = s3.list_objects(Bucket=bucket, Marker="b/d", MaxKeys=100)
    assert [o["Key"] for o in v1["Contents"]] == ["top1", "top2"]


def test_delete_objects(s3, bucket):
    keys = [f"del/{i}" for i in range(6)]
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=b"x")
    s3.put_object(Bucket=bucket, Key="keep", Body=b"k")
    out = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys + ["del/never-existed"]]})
    assert sorted(d["Key"] for d in out.get("Deleted", [])) == sorted(keys + ["del/never-existed"])
    assert out.get("Errors", []) == []
    assert list(bucket_listing(s3, bucket)) == ["keep"]
    quiet = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "keep"}], "Quiet": True})
    assert quiet.get("Errors", []) == []
    assert bucket_listing(s3, bucket) == {}


def test_multipart_upload_file(s3, bucket, tmp_path):
    src = tmp_path / "eight-mib.bin"
    src.write_bytes(os.urandom(8 * MiB + 123))
    cfg = TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB, max_concurrency=2)
    s3.upload_file(str(src), bucket, "big/eight", Config=cfg)
    head = s3.head_object(Bucket=bucket, Key="big/eight")
    assert head["ContentLength"] == src.stat().st_size
    data = src.read_bytes()
    part_md5s = hashlib.md5(data[:5 * MiB]).digest() + hashlib.md5(data[5 * MiB:]).digest()
    assert head["ETag"].strip('"') == hashlib.md5(part_md5s).hexdigest() + "-2"
    dst = tmp_path / "back.bin"
    s3.download_file(bucket, "big/eight", str(dst), Config=cfg)
    assert sha256_file(dst) == sha256_file(src)
    # A part's range of a multipart object.
    got = s3.get_object(Bucket=bucket, Key="big/eight", Range=f"bytes={5 * MiB - 3}-{5 * MiB + 2}")["Body"].read()
    assert got == data[5 * MiB - 3:5 * MiB + 3]

    # An aborted upload leaves nothing behind.
    up = s3.create_multipart_upload(Bucket=bucket, Key="big/aborted")
    s3.upload_part(Bucket=bucket, Key="big/aborted", UploadId=up["UploadId"], PartNumber=1, Body=b"x" * 1000)
    s3.abort_multipart_upload(Bucket=bucket, Key="big/aborted", UploadId=up["UploadId"])
    assert list(bucket_listing(s3, bucket)) == ["big/eight"]
    with pytest.raises(ClientError) as e:
        s3.upload_part(Bucket=bucket, Key="big/aborted", UploadId=up["UploadId"], PartNumber=2, Body=b"y")
    assert code_of(e) == "NoSuchUpload"


def test_presigned_url_with_urllib(s3, bucket):
    body = os.urandom(64 * KiB)
    s3.put_object(Bucket=bucket, Key="shared/file", Body=body)
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "shared/file"}, ExpiresIn=600)
    with urllib.request.urlopen(url, timeout=30) as r:
        assert r.status == 200
        assert r.read() == body
    put_url = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "shared/up"}, ExpiresIn=600)
    req = urllib.request.Request(put_url, data=b"uploaded via url", method="PUT")
    with urllib.request.urlopen(req, timeout=30) as r:
        assert r.status == 200
    assert s3.get_object(Bucket=bucket, Key="shared/up")["Body"].read() == b"uploaded via url"


def test_error_codes(server, s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="missing")
    assert code_of(e) == "NoSuchKey" and status_of(e) == 404

    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket="no-such-bucket-" + os.urandom(4).hex(), Key="k")
    assert code_of(e) == "NoSuchBucket" and status_of(e) == 404
    with pytest.raises(ClientError) as e:
        s3.list_objects_v2(Bucket="no-such-bucket-" + os.urandom(4).hex())
    assert code_of(e) == "NoSuchBucket"

    s3.put_object(Bucket=bucket, Key="k", Body=b"v")
    with pytest.raises(ClientError) as e:
        s3.delete_bucket(Bucket=bucket)
    assert code_of(e) == "BucketNotEmpty" and status_of(e) == 409

    for bad in ["Bad_Name", "ab", "-leading-dash", "a" * 64, "192.168.1.1"]:
        with pytest.raises(ClientError) as e:
            s3.create_bucket(Bucket=bad)
        assert code_of(e) == "InvalidBucketName", bad

    with pytest.raises(ClientError) as e:
        s3.create_bucket(Bucket=bucket)
    assert code_of(e) in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists")

    wrong = server.client(secret_key=server.secret_key + "x")
    with pytest.raises(ClientError) as e:
        wrong.list_buckets()
    assert code_of(e) == "SignatureDoesNotMatch" and status_of(e) == 403
    with pytest.raises(ClientError) as e:
        wrong.get_object(Bucket=bucket, Key="k")
    assert code_of(e) == "SignatureDoesNotMatch"

    for path in ["/", f"/{bucket}", f"/{bucket}/k"]:
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(server.endpoint + path, timeout=30)
        assert e.value.code == 403, path
        assert b"<Code>AccessDenied</Code>" in e.value.read(), path


def test_listing_past_default_page_size(s3, bucket):
    # More keys than one default page (1000) of ListObjectsV2 and ListObjects.
    keys = sorted(f"many/{i:05d}" for i in range(1100))
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda k: s3.put_object(Bucket=bucket, Key=k, Body=k.encode()), keys))
    first = s3.list_objects_v2(Bucket=bucket)
    assert first["KeyCount"] == 1000 and first["IsTruncated"]
    assert list(bucket_listing(s3, bucket)) == keys
    v1 = [o["Key"] for page in s3.get_paginator("list_objects").paginate(Bucket=bucket) for o in page["Contents"]]
    assert v1 == keys


def test_object_tagging(s3, bucket):
    body = os.urandom(10 * KiB)
    put = s3.put_object(Bucket=bucket, Key="tagged", Body=body, ContentType="text/x-cairn",
                        Metadata={"owner": "alice"}, Tagging="project=blue&retention=30%20days")
    got = s3.get_object_tagging(Bucket=bucket, Key="tagged")
    assert {t["Key"]: t["Value"] for t in got["TagSet"]} == {"project": "blue", "retention": "30 days"}
    assert s3.head_object(Bucket=bucket, Key="tagged")["ResponseMetadata"]["HTTPHeaders"]["x-amz-tagging-count"] == "2"

    s3.put_object_tagging(Bucket=bucket, Key="tagged", Tagging={"TagSet": [{"Key": "class", "Value": "PHI"}]})
    got = s3.get_object_tagging(Bucket=bucket, Key="tagged")
    assert got["TagSet"] == [{"Key": "class", "Value": "PHI"}]
    obj = s3.get_object(Bucket=bucket, Key="tagged")
    assert obj["Body"].read() == body
    assert obj["ETag"] == put["ETag"]
    assert obj["ContentType"] == "text/x-cairn" and obj["Metadata"] == {"owner": "alice"}
    assert obj["TagCount"] == 1

    with pytest.raises(ClientError) as e:
        s3.put_object_tagging(Bucket=bucket, Key="tagged",
                              Tagging={"TagSet": [{"Key": f"k{i}", "Value": "v"} for i in range(11)]})
    assert code_of(e) == "BadRequest" and status_of(e) == 400
    with pytest.raises(ClientError) as e:
        s3.put_object_tagging(Bucket=bucket, Key="tagged", Tagging={"TagSet": [{"Key": "aws:x", "Value": "v"}]})
    assert code_of(e) == "InvalidTag"
    with pytest.raises(ClientError) as e:
        s3.get_object_tagging(Bucket=bucket, Key="missing")
    assert code_of(e) == "NoSuchKey"

    s3.delete_object_tagging(Bucket=bucket, Key="tagged")
    assert s3.get_object_tagging(Bucket=bucket, Key="tagged")["TagSet"] == []


def test_bucket_tagging(s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.get_bucket_tagging(Bucket=bucket)
    assert code_of(e) == "NoSuchTagSet" and status_of(e) == 404
    s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": [{"Key": "cost-center", "Value": "42"},
                                                             {"Key": "owner", "Value": "ops@example.com"}]})
    got = s3.get_bucket_tagging(Bucket=bucket)
    assert {t["Key"]: t["Value"] for t in got["TagSet"]} == {"cost-center": "42", "owner": "ops@example.com"}
    with pytest.raises(ClientError) as e:
        s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": [{"Key": f"k{i}", "Value": "v"} for i in range(51)]})
    assert code_of(e) == "BadRequest"
    s3.delete_bucket_tagging(Bucket=bucket)
    with pytest.raises(ClientError) as e:
        s3.get_bucket_tagging(Bucket=bucket)
    assert code_of(e) == "NoSuchTagSet"
    s3.head_bucket(Bucket=bucket)


def test_presigned_post(server, s3, bucket):
    """Browser form uploads (POST Object) with forms boto3's generate_presigned_post makes, sent
    with requests as a browser sends them: SigV4 and SigV2, ${filename}, metadata and content
    type stored, the success statuses and redirect, and the policy's refusals."""
    def send(post, extra=None, filename="f.bin", data=b"x", redirects=False):
        fields = dict(post["fields"], **(extra or {}))
        # The file goes last: S3 ignores what follows it.
        return requests.post(post["url"], data=fields, files={"file": (filename, data)},
                             allow_redirects=redirects, timeout=60)

    body = os.urandom(300 * KiB + 3)
    post = s3.generate_presigned_post(
        bucket, "forms/${filename}",
        Fields={"Content-Type": "image/x-cairn", "x-amz-meta-owner": "alice", "success_action_status": "201"},
        Conditions=[{"Content-Type": "image/x-cairn"}, {"x-amz-meta-owner": "alice"}, {"success_action_status": "201"},
                    ["starts-with", "$key", "forms/"], ["content-length-range", 1, MiB]],
        ExpiresIn=600)
    assert post["fields"]["x-amz-algorithm"] == "AWS4-HMAC-SHA256"
    r = send(post, filename="photo.png", data=body)
    assert r.status_code == 201, r.text
    doc = ElementTree.fromstring(r.content)
    assert doc.find("Key").text == "forms/photo.png" and doc.find("Bucket").text == bucket
    assert doc.find("ETag").text.strip('"') == hashlib.md5(body).hexdigest()
    got = s3.get_object(Bucket=bucket, Key="forms/photo.png")
    assert got["Body"].read() == body
    assert got["ContentType"] == "image/x-cairn" and got["Metadata"] == {"owner": "alice"}

    # Refusals, each with S3's status and code, storing nothing.
    too_big = send(post, filename="big.bin", data=b"x" * (MiB + 1))
    assert too_big.status_code == 400 and b"<Code>EntityTooLarge</Code>" in too_big.content
    extra = send(post, extra={"x-amz-meta-sneaky": "1"}, filename="extra.bin")
    assert extra.status_code == 403 and b"Extra input fields: x-amz-meta-sneaky" in extra.content
    wrong_type = send(post, extra={"Content-Type": "text/plain"}, filename="type.bin")
    assert wrong_type.status_code == 403 and b"<Code>AccessDenied</Code>" in wrong_type.content
    for name in ("big.bin", "extra.bin", "type.bin"):
        with pytest.raises(ClientError) as e:
            s3.head_object(Bucket=bucket, Key="forms/" + name)
        assert status_of(e) == 404

    # A redirect after success carries bucket, key and ETag.
    to = "http://example.invalid/done"
    post = s3.generate_presigned_post(bucket, "redir.txt", Fields={"success_action_redirect": to},
                                      Conditions=[{"success_action_redirect": to}], ExpiresIn=600)
    r = send(post, data=b"redirected")
    assert r.status_code == 303, r.text
    assert r.headers["Location"] == f'{to}?bucket={bucket}&key=redir.txt&etag=%22{hashlib.md5(b"redirected").hexdigest()}%22'

    # SigV2 forms (a client signing with signature_version "s3").
    v2_client = boto3.session.Session().client(
        "s3", endpoint_url=server.endpoint, aws_access_key_id=server.access_key, aws_secret_access_key=server.secret_key,
        config=Config(region_name="us-east-1", signature_version="s3", s3={"addressing_style": "path"}))
    v2 = v2_client.generate_presigned_post(bucket, "v2.txt", ExpiresIn=600)
    assert "signature" in v2["fields"] and "AWSAccessKeyId" in v2["fields"]
    r = send(v2, data=b"version two")
    assert r.status_code == 204, r.text
    assert s3.get_object(Bucket=bucket, Key="v2.txt")["Body"].read() == b"version two"
    # Requests to a bucket signed with SigV2: botocore signs "/bucket/" for "/bucket", as AWS
    # canonicalizes them (CreateBucket, PutBucketCors: SignatureDoesNotMatch before).
    v2_bucket = bucket + "-v2"
    v2_client.create_bucket(Bucket=v2_bucket)
    v2_client.put_bucket_cors(Bucket=v2_bucket, CORSConfiguration={"CORSRules": [{"AllowedMethods": ["GET"], "AllowedOrigins": ["*"]}]})
    v2_client.put_object(Bucket=v2_bucket, Key="k", Body=b"v2 body")
    url = v2_client.generate_presigned_url("get_object", Params={"Bucket": v2_bucket, "Key": "k"}, ExpiresIn=600)
    r = requests.get(url, headers={"Origin": "http://example.com"}, timeout=60)
    assert r.status_code == 200 and r.content == b"v2 body" and r.headers.get("Access-Control-Allow-Origin") == "*", r.text
    v2_client.delete_object(Bucket=v2_bucket, Key="k")
    v2_client.delete_bucket(Bucket=v2_bucket)

    # A wrong secret, then an expired policy.
    bad = server.client(secret_key=server.secret_key + "x").generate_presigned_post(bucket, "bad.txt", ExpiresIn=600)
    r = send(bad)
    assert r.status_code == 403 and b"<Code>SignatureDoesNotMatch</Code>" in r.content
    short = s3.generate_presigned_post(bucket, "late.txt", ExpiresIn=1)
    time.sleep(2.5)
    r = send(short)
    assert r.status_code == 403 and b"Policy expired." in r.content

    # Without credentials, the private bucket refuses the form.
    r = requests.post(f"{server.endpoint}/{bucket}", data={"key": "anon.txt"}, files={"file": ("f", b"x")}, timeout=60)
    assert r.status_code == 403 and b"<Code>AccessDenied</Code>" in r.content
