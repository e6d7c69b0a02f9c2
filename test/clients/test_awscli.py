"""The aws cli (v1, newest from PyPI) against cairn: aws s3 and aws s3api."""

import json
import os

import pytest

from cairntest import bucket_listing, make_tree, run, sha256_file, tool, tree_digest

MiB = 1 << 20


@pytest.fixture(scope="module")
def aws(server, tmp_path_factory):
    cfg = tmp_path_factory.mktemp("awscfg") / "config"
    cfg.write_text("[default]\nregion = us-east-1\ns3 =\n    addressing_style = path\n"
                   "    multipart_threshold = 8MB\n    multipart_chunksize = 5MB\n")
    # No retries: a retry would hide a lost response (botocore misread the request after an
    # empty 100-continue PUT on one connection until the server answered those with 100 Continue).
    env = dict(os.environ, AWS_ACCESS_KEY_ID=server.access_key, AWS_SECRET_ACCESS_KEY=server.secret_key,
               AWS_DEFAULT_REGION="us-east-1", AWS_CONFIG_FILE=str(cfg), AWS_PAGER="", AWS_MAX_ATTEMPTS="1")
    exe = tool("aws")

    def aws(*args, check=True):
        # A short read timeout, so that a lost response fails the test in 15 s, not 60.
        return run([exe, "--endpoint-url", server.endpoint, "--cli-read-timeout", "15", *args], env=env, check=check)
    return aws


def test_aws_s3_high_level(aws, s3, tmp_path):
    bucket = "awscli-" + os.urandom(3).hex()
    aws("s3", "mb", f"s3://{bucket}")
    assert f"{bucket}" in aws("s3", "ls").stdout

    src = tmp_path / "src"
    want = make_tree(src, {"one.txt": 10, "dir/two.bin": 70 * 1024, "dir/sub/three.bin": 1,
                           "big.bin": 9 * MiB + 17, "empty": 0})
    # cp of a single file (big.bin goes up as a multipart upload: threshold 8 MB).
    aws("s3", "cp", src / "big.bin", f"s3://{bucket}/single/big.bin")
    got = tmp_path / "big.back"
    aws("s3", "cp", f"s3://{bucket}/single/big.bin", got)
    assert sha256_file(got) == want["big.bin"]
    assert bucket_listing(s3, bucket)["single/big.bin"][1].endswith("-2")

    # sync up, listing, sync down, compare.
    aws("s3", "sync", src, f"s3://{bucket}/tree")
    listed = bucket_listing(s3, bucket, "tree/")
    assert sorted(listed) == sorted(f"tree/{k}" for k in want)
    assert {k: v[0] for k, v in listed.items()} == {f"tree/{k}": (src / k).stat().st_size for k in want}
    ls = aws("s3", "ls", "--recursive", f"s3://{bucket}/tree/").stdout
    assert sorted(line.split()[-1] for line in ls.splitlines()) == sorted(f"tree/{k}" for k in want)
    down = tmp_path / "down"
    aws("s3", "sync", f"s3://{bucket}/tree", down)
    assert tree_digest(down) == want

    # A second sync uploads nothing; after a local change and a delete, --delete mirrors them.
    again = aws("s3", "sync", src, f"s3://{bucket}/tree").stdout
    assert "upload:" not in again, again
    (src / "one.txt").write_bytes(b"changed contents")
    (src / "dir/two.bin").unlink()
    aws("s3", "sync", "--delete", src, f"s3://{bucket}/tree")
    assert sorted(bucket_listing(s3, bucket, "tree/")) == sorted(f"tree/{k}" for k in tree_digest(src))
    assert s3.get_object(Bucket=bucket, Key="tree/one.txt")["Body"].read() == b"changed contents"

    # rm and rb.
    aws("s3", "rm", f"s3://{bucket}/single/big.bin")
    assert "single/big.bin" not in bucket_listing(s3, bucket)
    assert aws("s3", "rb", f"s3://{bucket}", check=False).returncode != 0  # not empty
    aws("s3", "rm", "--recursive", f"s3://{bucket}/")
    assert bucket_listing(s3, bucket) == {}
    aws("s3", "rb", f"s3://{bucket}")
    assert bucket not in aws("s3", "ls").stdout


def test_aws_s3api(aws, s3, bucket, tmp_path):
    body = tmp_path / "obj.bin"
    body.write_bytes(os.urandom(300 * 1024))
    put = json.loads(aws("s3api", "put-object", "--bucket", bucket, "--key", "api/obj", "--body", body,
                         "--content-type", "application/x-awscli", "--metadata", "k1=v1,k2=v2").stdout)
    assert put["ETag"].strip('"')

    head = json.loads(aws("s3api", "head-object", "--bucket", bucket, "--key", "api/obj").stdout)
    assert head["ContentLength"] == 300 * 1024
    assert head["ContentType"] == "application/x-awscli"
    assert head["Metadata"] == {"k1": "v1", "k2": "v2"}
    assert head["ETag"] == put["ETag"]

    out = tmp_path / "got.bin"
    got = json.loads(aws("s3api", "get-object", "--bucket", bucket, "--key", "api/obj", out).stdout)
    assert got["ContentLength"] == 300 * 1024
    assert sha256_file(out) == sha256_file(body)

    ranged = tmp_path / "range.bin"
    aws("s3api", "get-object", "--bucket", bucket, "--key", "api/obj", "--range", "bytes=1000-1999", ranged)
    assert ranged.read_bytes() == body.read_bytes()[1000:2000]

    missing = aws("s3api", "head-object", "--bucket", bucket, "--key", "api/none", check=False)
    assert missing.returncode != 0 and ("404" in missing.stderr or "Not Found" in missing.stderr)

    listing = json.loads(aws("s3api", "list-objects-v2", "--bucket", bucket).stdout)
    assert [o["Key"] for o in listing["Contents"]] == ["api/obj"]
    aws("s3api", "delete-object", "--bucket", bucket, "--key", "api/obj")
    assert bucket_listing(s3, bucket) == {}
