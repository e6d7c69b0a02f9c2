"""Server-side encryption with boto3 and the aws cli: SSE-S3, SSE-KMS, SSE-C (allowed over plain
HTTP by --sse-c-allow-http) and bucket default encryption."""

import hashlib
import os
import re
import secrets

import botocore.exceptions
import pytest

from cairntest import CairnServer, run, tool


@pytest.fixture(scope="module")
def server(cairn_bin, tmp_path_factory):
    base = tmp_path_factory.mktemp("cairn-sse")
    (base / "data").mkdir()
    s = CairnServer(cairn_bin, base / "data", base / "server.log", extra_args=["--sse-c-allow-http"]).start()
    yield s
    s.stop()


def code(exc):
    return exc.value.response["Error"]["Code"]


def test_boto3_sse_s3_and_kms(s3, bucket):
    data = os.urandom(200_000)
    put = s3.put_object(Bucket=bucket, Key="s3", Body=data, ServerSideEncryption="AES256")
    assert put["ServerSideEncryption"] == "AES256"
    assert put["ETag"] == '"%s"' % hashlib.md5(data).hexdigest()
    got = s3.get_object(Bucket=bucket, Key="s3")
    assert got["ServerSideEncryption"] == "AES256"
    assert got["Body"].read() == data
    part = s3.get_object(Bucket=bucket, Key="s3", Range="bytes=65530-131080")
    assert part["Body"].read() == data[65530:131081]
    head = s3.head_object(Bucket=bucket, Key="s3")
    assert head["ContentLength"] == len(data)
    listed = {o["Key"]: o["Size"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]}
    assert listed["s3"] == len(data)
    # A metadata-only copy onto itself answers the ETag a HEAD gives: the plaintext's MD5.
    cp = s3.copy_object(Bucket=bucket, Key="s3", CopySource=f"{bucket}/s3", MetadataDirective="REPLACE",
                        Metadata={"a": "1"}, ServerSideEncryption="AES256")
    assert cp["CopyObjectResult"]["ETag"] == head["ETag"] == '"%s"' % hashlib.md5(data).hexdigest()

    put = s3.put_object(Bucket=bucket, Key="kms", Body=b"under the default KMS key", ServerSideEncryption="aws:kms")
    assert put["ServerSideEncryption"] == "aws:kms" and put["SSEKMSKeyId"]
    assert s3.get_object(Bucket=bucket, Key="kms")["Body"].read() == b"under the default KMS key"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_object(Bucket=bucket, Key="nokey", Body=b"x", ServerSideEncryption="aws:kms", SSEKMSKeyId="no-such-key")
    assert code(e) == "KMS.NotFoundException"


def test_boto3_sse_c(s3, bucket):
    key = secrets.token_bytes(32)
    data = os.urandom(100_000)
    # boto3 sends the key base64-encoded with its MD5.
    s3.put_object(Bucket=bucket, Key="c", Body=data, SSECustomerAlgorithm="AES256", SSECustomerKey=key)
    got = s3.get_object(Bucket=bucket, Key="c", SSECustomerAlgorithm="AES256", SSECustomerKey=key)
    assert got["Body"].read() == data
    assert got["SSECustomerAlgorithm"] == "AES256"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_object(Bucket=bucket, Key="c")
    assert code(e) == "InvalidRequest"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_object(Bucket=bucket, Key="c", SSECustomerAlgorithm="AES256", SSECustomerKey=secrets.token_bytes(32))
    assert code(e) == "AccessDenied"
    # A copy from SSE-C to SSE-S3.
    s3.copy_object(Bucket=bucket, Key="c2", CopySource={"Bucket": bucket, "Key": "c"},
                   CopySourceSSECustomerAlgorithm="AES256", CopySourceSSECustomerKey=key, ServerSideEncryption="AES256")
    assert s3.get_object(Bucket=bucket, Key="c2")["Body"].read() == data


def test_boto3_bucket_default_encryption(s3, bucket):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_bucket_encryption(Bucket=bucket)
    assert code(e) == "ServerSideEncryptionConfigurationNotFoundError"
    s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={
        "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]})
    rules = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"]
    assert rules[0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
    put = s3.put_object(Bucket=bucket, Key="d", Body=b"default")
    assert put["ServerSideEncryption"] == "AES256"
    s3.delete_bucket_encryption(Bucket=bucket)
    assert "ServerSideEncryption" not in s3.put_object(Bucket=bucket, Key="e", Body=b"plain")


def test_awscli_cp_sse(server, s3, bucket, tmp_path):
    env = dict(os.environ, AWS_ACCESS_KEY_ID=server.access_key, AWS_SECRET_ACCESS_KEY=server.secret_key,
               AWS_DEFAULT_REGION="us-east-1", AWS_PAGER="", AWS_MAX_ATTEMPTS="1")
    src = tmp_path / "file.bin"
    data = os.urandom(9 * (1 << 20) + 5)  # above the cli's multipart threshold (8 MB)
    src.write_bytes(data)
    aws = tool("aws")
    run([aws, "--endpoint-url", server.endpoint, "s3", "cp", src, f"s3://{bucket}/f", "--sse", "AES256"], env=env)
    head = s3.head_object(Bucket=bucket, Key="f")
    assert head["ServerSideEncryption"] == "AES256" and head["ContentLength"] == len(data)
    back = tmp_path / "back.bin"
    run([aws, "--endpoint-url", server.endpoint, "s3", "cp", f"s3://{bucket}/f", back], env=env)
    assert back.read_bytes() == data
    out = run([aws, "--endpoint-url", server.endpoint, "s3", "ls", f"s3://{bucket}/f"], env=env).stdout
    assert re.search(r"\b%d\b" % len(data), out), out
