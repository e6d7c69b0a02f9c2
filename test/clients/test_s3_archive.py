"""S3 for backup and archive software, through boto3 and the aws cli against cairn: versioning,
Object Lock, lifecycle configuration, CORS, Public Access Block, ownership controls,
GetObjectAttributes and conditional writes, with AWS's error codes for bad input."""

import datetime
import json
import os
import urllib.request

import pytest
from botocore.exceptions import ClientError

from cairntest import run, tool


def code_of(excinfo):
    return excinfo.value.response["Error"]["Code"]


def status_of(excinfo):
    return excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"]


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def test_versioning(s3, bucket):
    assert "Status" not in s3.get_bucket_versioning(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="k", Body=b"before")
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"one")["VersionId"]
    v2 = s3.put_object(Bucket=bucket, Key="k", Body=b"two")["VersionId"]
    assert v1 != v2 and "null" not in (v1, v2)
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"two"
    assert s3.get_object(Bucket=bucket, Key="k", VersionId=v1)["Body"].read() == b"one"

    listed = s3.list_object_versions(Bucket=bucket, Prefix="k")
    ids = [v["VersionId"] for v in listed["Versions"]]
    assert ids[:2] == [v2, v1] and len(ids) == 3  # and the version written before versioning
    assert [v["IsLatest"] for v in listed["Versions"]] == [True, False, False]

    # A delete is a delete marker; reads of the key say so; removing the marker brings it back.
    d = s3.delete_object(Bucket=bucket, Key="k")
    assert d["DeleteMarker"] is True
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="k")
    assert code_of(e) == "NoSuchKey"
    assert e.value.response["ResponseMetadata"]["HTTPHeaders"].get("x-amz-delete-marker") == "true"
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="k", VersionId=d["VersionId"])
    assert status_of(e) == 405
    s3.delete_object(Bucket=bucket, Key="k", VersionId=d["VersionId"])
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"two"

    # Copy from a version; multi-delete of versions.
    c = s3.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": "k", "VersionId": v1})
    assert c["CopySourceVersionId"] == v1
    assert s3.get_object(Bucket=bucket, Key="copy")["Body"].read() == b"one"
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="k", VersionId="1234567890.12345")
    assert code_of(e) == "NoSuchVersion"
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="k", VersionId="not-a-version")
    assert code_of(e) == "InvalidArgument"

    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Suspended"})
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Suspended"
    with pytest.raises(ClientError) as e:
        s3.delete_bucket(Bucket=bucket)
    assert code_of(e) == "BucketNotEmpty"
    every = s3.list_object_versions(Bucket=bucket)
    objects = [{"Key": v["Key"], "VersionId": v["VersionId"]} for v in every.get("Versions", []) + every.get("DeleteMarkers", [])]
    gone = s3.delete_objects(Bucket=bucket, Delete={"Objects": objects})
    assert len(gone["Deleted"]) == len(objects) and not gone.get("Errors")
    s3.delete_bucket(Bucket=bucket)


def test_object_lock(s3):
    bucket = "lock-" + os.urandom(4).hex()
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    s3.put_object_lock_configuration(Bucket=bucket, ObjectLockConfiguration={
        "ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}})
    got = s3.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"]
    assert got["Rule"]["DefaultRetention"] == {"Mode": "GOVERNANCE", "Days": 1}

    # Default retention: GOVERNANCE, removable only with the bypass.
    v = s3.put_object(Bucket=bucket, Key="gov", Body=b"governed")["VersionId"]
    r = s3.get_object_retention(Bucket=bucket, Key="gov", VersionId=v)["Retention"]
    assert r["Mode"] == "GOVERNANCE" and r["RetainUntilDate"] > utcnow()
    with pytest.raises(ClientError) as e:
        s3.delete_object(Bucket=bucket, Key="gov", VersionId=v)
    assert code_of(e) == "AccessDenied"
    s3.delete_object(Bucket=bucket, Key="gov", VersionId=v, BypassGovernanceRetention=True)

    # COMPLIANCE: never shortened, never removed, not even by the root key with the bypass.
    until = utcnow() + datetime.timedelta(hours=2)
    v = s3.put_object(Bucket=bucket, Key="comp", Body=b"compliant", ObjectLockMode="COMPLIANCE",
                      ObjectLockRetainUntilDate=until)["VersionId"]
    with pytest.raises(ClientError) as e:
        s3.put_object_retention(Bucket=bucket, Key="comp", VersionId=v, BypassGovernanceRetention=True,
                                Retention={"Mode": "COMPLIANCE", "RetainUntilDate": until - datetime.timedelta(hours=1)})
    assert code_of(e) == "AccessDenied" and status_of(e) == 403
    with pytest.raises(ClientError) as e:
        s3.put_object_retention(Bucket=bucket, Key="comp", VersionId=v,
                                Retention={"Mode": "GOVERNANCE", "RetainUntilDate": until + datetime.timedelta(hours=1)})
    assert code_of(e) == "AccessDenied"
    s3.put_object_retention(Bucket=bucket, Key="comp", VersionId=v,
                            Retention={"Mode": "COMPLIANCE", "RetainUntilDate": until + datetime.timedelta(hours=1)})
    with pytest.raises(ClientError) as e:
        s3.delete_object(Bucket=bucket, Key="comp", VersionId=v, BypassGovernanceRetention=True)
    assert code_of(e) == "AccessDenied"
    assert s3.get_object(Bucket=bucket, Key="comp", VersionId=v)["Body"].read() == b"compliant"

    # Legal hold.
    v = s3.put_object(Bucket=bucket, Key="held", Body=b"held", ObjectLockLegalHoldStatus="ON")["VersionId"]
    assert s3.get_object_legal_hold(Bucket=bucket, Key="held", VersionId=v)["LegalHold"]["Status"] == "ON"
    with pytest.raises(ClientError) as e:
        s3.delete_object(Bucket=bucket, Key="held", VersionId=v, BypassGovernanceRetention=True)
    assert code_of(e) == "AccessDenied"
    s3.put_object_legal_hold(Bucket=bucket, Key="held", VersionId=v, LegalHold={"Status": "OFF"})

    # Suspending versioning of a locked bucket, and a lock request on a bucket without it.
    with pytest.raises(ClientError) as e:
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Suspended"})
    assert code_of(e) == "InvalidBucketState"
    plain = "nolock-" + os.urandom(4).hex()
    s3.create_bucket(Bucket=plain)
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=plain, Key="k", Body=b"x", ObjectLockMode="GOVERNANCE",
                      ObjectLockRetainUntilDate=until)
    assert code_of(e) == "InvalidRequest"
    with pytest.raises(ClientError) as e:
        s3.get_object_lock_configuration(Bucket=plain)
    assert code_of(e) == "ObjectLockConfigurationNotFoundError"


def test_lifecycle_configuration(s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.get_bucket_lifecycle_configuration(Bucket=bucket)
    assert code_of(e) == "NoSuchLifecycleConfiguration" and status_of(e) == 404
    rules = [
        {"ID": "logs", "Status": "Enabled", "Filter": {"Prefix": "logs/"}, "Expiration": {"Days": 30}},
        {"ID": "old", "Status": "Enabled", "Filter": {"And": {"Prefix": "a/", "Tags": [{"Key": "t", "Value": "v"}],
                                                                "ObjectSizeGreaterThan": 10}},
         "NoncurrentVersionExpiration": {"NoncurrentDays": 7, "NewerNoncurrentVersions": 2}},
        {"ID": "uploads", "Status": "Disabled", "Filter": {}, "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 2}},
    ]
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": rules})
    got = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    assert [r["ID"] for r in got] == ["logs", "old", "uploads"]
    assert got[0]["Expiration"] == {"Days": 30}
    assert got[1]["NoncurrentVersionExpiration"] == {"NoncurrentDays": 7, "NewerNoncurrentVersions": 2}

    # Malformed and contradictory rules, as S3 refuses them.
    bad = [
        ({"ID": "x", "Status": "Enabled", "Filter": {"Prefix": ""}, "Expiration": {"Days": 0}}, "InvalidArgument"),
        ({"ID": "x", "Status": "Enabled", "Filter": {"Prefix": ""}, "Expiration": {"Days": 1, "Date": datetime.datetime(2030, 1, 1)}}, "MalformedXML"),
        ({"ID": "x", "Status": "Enabled", "Filter": {"Prefix": ""}}, "InvalidRequest"),
        ({"ID": "x" * 256, "Status": "Enabled", "Filter": {"Prefix": ""}, "Expiration": {"Days": 1}}, "InvalidArgument"),
    ]
    for rule, code in bad:
        with pytest.raises(ClientError) as e:
            s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [rule]})
        assert code_of(e) == code, rule
        assert status_of(e) == 400
    with pytest.raises(ClientError) as e:
        s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [rules[0], dict(rules[0])]})
    assert code_of(e) == "InvalidArgument"  # two rules with one ID
    assert len(s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]) == 3  # unchanged
    s3.delete_bucket_lifecycle(Bucket=bucket)
    with pytest.raises(ClientError) as e:
        s3.get_bucket_lifecycle_configuration(Bucket=bucket)
    assert code_of(e) == "NoSuchLifecycleConfiguration"


def test_cors(server, s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.get_bucket_cors(Bucket=bucket)
    assert code_of(e) == "NoSuchCORSConfiguration"
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": [{
        "AllowedOrigins": ["https://app.example.com"], "AllowedMethods": ["GET", "PUT"],
        "AllowedHeaders": ["content-type"], "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 300}]})
    assert s3.get_bucket_cors(Bucket=bucket)["CORSRules"][0]["AllowedMethods"] == ["GET", "PUT"]

    def preflight(origin, method):
        req = urllib.request.Request(f"{server.endpoint}/{bucket}/k", method="OPTIONS", headers={
            "Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": "content-type"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, dict(r.headers)
        except urllib.error.HTTPError as err:
            return err.code, dict(err.headers)

    status, headers = preflight("https://app.example.com", "PUT")
    assert status == 200
    assert headers["Access-Control-Allow-Origin"] == "https://app.example.com"
    assert headers["Access-Control-Max-Age"] == "300"
    assert preflight("https://evil.example.com", "PUT")[0] == 403
    assert preflight("https://app.example.com", "DELETE")[0] == 403
    with pytest.raises(ClientError) as e:
        s3.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": [{"AllowedOrigins": ["*"], "AllowedMethods": ["PATCH"]}]})
    assert code_of(e) == "InvalidRequest"
    s3.delete_bucket_cors(Bucket=bucket)
    assert preflight("https://app.example.com", "PUT")[0] == 403


def test_public_access_block_and_ownership(server, s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.get_public_access_block(Bucket=bucket)
    assert code_of(e) == "NoSuchPublicAccessBlockConfiguration"
    s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration={
        "BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": True, "RestrictPublicBuckets": True})
    assert s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"]["BlockPublicAcls"] is True
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="pub", Body=b"x", ACL="public-read")
    assert code_of(e) == "AccessDenied"
    with pytest.raises(ClientError) as e:
        s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*"}]}))
    assert code_of(e) == "AccessDenied"
    s3.delete_public_access_block(Bucket=bucket)

    s3.put_bucket_ownership_controls(Bucket=bucket, OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]})
    got = s3.get_bucket_ownership_controls(Bucket=bucket)["OwnershipControls"]["Rules"]
    assert got == [{"ObjectOwnership": "BucketOwnerEnforced"}]
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="acl", Body=b"x", ACL="public-read")
    assert code_of(e) == "AccessControlListNotSupported"
    s3.put_object(Bucket=bucket, Key="owned", Body=b"x", ACL="bucket-owner-full-control")


def test_policy_conditions(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="pub/readme", Body=b"public")
    s3.put_object(Bucket=bucket, Key="priv/secret", Body=b"private")
    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/pub/*",
        "Condition": {"IpAddress": {"aws:SourceIp": "127.0.0.0/8"}, "Bool": {"aws:SecureTransport": "false"}}}]}))
    with urllib.request.urlopen(f"{server.endpoint}/{bucket}/pub/readme", timeout=30) as r:
        assert r.read() == b"public"
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(f"{server.endpoint}/{bucket}/priv/secret", timeout=30)
    assert e.value.code == 403
    with pytest.raises(ClientError) as e:
        s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*",
            "Condition": {"NoSuchOperator": {"aws:SourceIp": "127.0.0.1"}}}]}))
    assert code_of(e) == "MalformedPolicy"


def test_object_attributes_and_conditional_writes(s3, bucket):
    s3.put_object(Bucket=bucket, Key="a", Body=b"12345", ChecksumAlgorithm="SHA256")
    attrs = s3.get_object_attributes(Bucket=bucket, Key="a", ObjectAttributes=["ETag", "ObjectSize", "Checksum", "StorageClass"])
    assert attrs["ObjectSize"] == 5 and attrs["StorageClass"] == "STANDARD"
    assert attrs["Checksum"]["ChecksumSHA256"]
    with pytest.raises(ClientError) as e:
        s3.get_object_attributes(Bucket=bucket, Key="a", ObjectAttributes=["Bogus"])
    assert code_of(e) == "InvalidArgument"

    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="a", Body=b"again", IfNoneMatch="*")
    assert code_of(e) == "PreconditionFailed" and status_of(e) == 412
    etag = s3.head_object(Bucket=bucket, Key="a")["ETag"]
    s3.put_object(Bucket=bucket, Key="a", Body=b"swapped", IfMatch=etag)
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="a", Body=b"lost", IfMatch=etag)
    assert code_of(e) == "PreconditionFailed"
    assert s3.get_object(Bucket=bucket, Key="a")["Body"].read() == b"swapped"

    up = s3.create_multipart_upload(Bucket=bucket, Key="a")["UploadId"]
    part = s3.upload_part(Bucket=bucket, Key="a", UploadId=up, PartNumber=1, Body=b"multi")
    with pytest.raises(ClientError) as e:
        s3.complete_multipart_upload(Bucket=bucket, Key="a", UploadId=up, IfNoneMatch="*",
                                     MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    assert code_of(e) == "PreconditionFailed"
    assert s3.get_object(Bucket=bucket, Key="a")["Body"].read() == b"swapped"


@pytest.fixture(scope="module")
def aws(server, tmp_path_factory):
    cfg = tmp_path_factory.mktemp("awscfg") / "config"
    cfg.write_text("[default]\nregion = us-east-1\ns3 =\n    addressing_style = path\n")
    env = dict(os.environ, AWS_ACCESS_KEY_ID=server.access_key, AWS_SECRET_ACCESS_KEY=server.secret_key,
               AWS_DEFAULT_REGION="us-east-1", AWS_CONFIG_FILE=str(cfg), AWS_PAGER="", AWS_MAX_ATTEMPTS="1")
    exe = tool("aws")

    def aws(*args, check=True):
        out = run([exe, "--endpoint-url", server.endpoint, "--cli-read-timeout", "15", "--output", "json", *args], env=env, check=check)
        return json.loads(out.stdout) if check and out.stdout.strip() else out
    return aws


def test_aws_cli_versions_lock_lifecycle(aws, tmp_path):
    bucket = "awscli-arch-" + os.urandom(3).hex()
    aws("s3api", "create-bucket", "--bucket", bucket, "--object-lock-enabled-for-bucket")
    assert aws("s3api", "get-bucket-versioning", "--bucket", bucket)["Status"] == "Enabled"
    aws("s3api", "put-object-lock-configuration", "--bucket", bucket, "--object-lock-configuration",
        json.dumps({"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}}))
    body = tmp_path / "b"
    body.write_bytes(b"first")
    v1 = aws("s3api", "put-object", "--bucket", bucket, "--key", "k", "--body", str(body))["VersionId"]
    body.write_bytes(b"second")
    v2 = aws("s3api", "put-object", "--bucket", bucket, "--key", "k", "--body", str(body))["VersionId"]
    listed = aws("s3api", "list-object-versions", "--bucket", bucket)
    assert [v["VersionId"] for v in listed["Versions"]] == [v2, v1]
    ret = aws("s3api", "get-object-retention", "--bucket", bucket, "--key", "k", "--version-id", v1)
    assert ret["Retention"]["Mode"] == "GOVERNANCE"
    out = tmp_path / "out"
    aws("s3api", "get-object", "--bucket", bucket, "--key", "k", "--version-id", v1, str(out))
    assert out.read_bytes() == b"first"

    # The locked version refuses removal; with the bypass it goes.
    refused = aws("s3api", "delete-object", "--bucket", bucket, "--key", "k", "--version-id", v1, check=False)
    assert refused.returncode != 0 and "AccessDenied" in refused.stderr
    aws("s3api", "delete-object", "--bucket", bucket, "--key", "k", "--version-id", v1, "--bypass-governance-retention")
    listed = aws("s3api", "list-object-versions", "--bucket", bucket)
    assert [v["VersionId"] for v in listed["Versions"]] == [v2]

    aws("s3api", "put-bucket-lifecycle-configuration", "--bucket", bucket, "--lifecycle-configuration",
        json.dumps({"Rules": [{"ID": "nc", "Status": "Enabled", "Filter": {"Prefix": ""},
                               "NoncurrentVersionExpiration": {"NoncurrentDays": 30}}]}))
    got = aws("s3api", "get-bucket-lifecycle-configuration", "--bucket", bucket)
    assert got["Rules"][0]["NoncurrentVersionExpiration"]["NoncurrentDays"] == 30
    bad = aws("s3api", "put-bucket-lifecycle-configuration", "--bucket", bucket, "--lifecycle-configuration",
              json.dumps({"Rules": [{"ID": "nc", "Status": "Enabled", "Filter": {"Prefix": ""}, "Expiration": {"Days": 0}}]}), check=False)
    assert bad.returncode != 0 and "InvalidArgument" in bad.stderr
    aws("s3api", "put-object-tagging", "--bucket", bucket, "--key", "k", "--version-id", v2,
        "--tagging", json.dumps({"TagSet": [{"Key": "kind", "Value": "backup"}]}))
    tags = aws("s3api", "get-object-tagging", "--bucket", bucket, "--key", "k", "--version-id", v2)
    assert tags["TagSet"] == [{"Key": "kind", "Value": "backup"}]
    attrs = aws("s3api", "get-object-attributes", "--bucket", bucket, "--key", "k", "--object-attributes", "ObjectSize", "ETag")
    assert attrs["ObjectSize"] == len(b"second")
