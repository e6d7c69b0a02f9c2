"""s3cmd (newest from PyPI) against cairn, SigV4, path-style, plain HTTP."""

import os

import pytest

from cairntest import bucket_listing, make_tree, run, sha256_file, tool, tree_digest

MiB = 1 << 20


@pytest.fixture(scope="module")
def s3cmd(server, tmp_path_factory):
    cfg = tmp_path_factory.mktemp("s3cmd") / "s3cfg"
    cfg.write_text(
        "[default]\n"
        f"access_key = {server.access_key}\n"
        f"secret_key = {server.secret_key}\n"
        f"host_base = {server.host_port}\n"
        f"host_bucket = {server.host_port}\n"
        "bucket_location = us-east-1\n"
        "use_https = False\n"
        "signature_v2 = False\n"
        "multipart_chunk_size_mb = 5\n"
        "check_ssl_certificate = False\n"
        "progress_meter = False\n")
    exe = tool("s3cmd")

    def s3cmd(*args, check=True):
        return run([exe, "--config", cfg, *args], check=check)
    return s3cmd


def test_s3cmd(s3cmd, s3, tmp_path):
    bucket = "s3cmd-" + os.urandom(3).hex()
    s3cmd("mb", f"s3://{bucket}")
    assert f"s3://{bucket}" in s3cmd("ls").stdout

    src = tmp_path / "src"
    want = make_tree(src, {"a.txt": 100, "d/b.bin": 200 * 1024, "d/e/c.bin": 1, "big.bin": 12 * MiB + 5})

    # put / get of single files; big.bin goes up in 5 MiB parts.
    s3cmd("put", src / "a.txt", f"s3://{bucket}/single/a.txt")
    s3cmd("put", src / "big.bin", f"s3://{bucket}/single/big.bin")
    listed = bucket_listing(s3, bucket, "single/")
    assert listed["single/big.bin"][0] == 12 * MiB + 5 and listed["single/big.bin"][1].endswith("-3")
    got = tmp_path / "big.back"
    s3cmd("get", f"s3://{bucket}/single/big.bin", got)
    assert sha256_file(got) == want["big.bin"]
    s3cmd("get", f"s3://{bucket}/single/a.txt", tmp_path / "a.back")
    assert sha256_file(tmp_path / "a.back") == want["a.txt"]

    ls = s3cmd("ls", f"s3://{bucket}/single/").stdout
    assert sorted(line.split()[-1] for line in ls.splitlines() if "s3://" in line) == \
        [f"s3://{bucket}/single/a.txt", f"s3://{bucket}/single/big.bin"]

    # sync up and down; s3cmd compares by md5 (ETag) and size.
    s3cmd("sync", f"{src}/", f"s3://{bucket}/tree/")
    assert {k: v[0] for k, v in bucket_listing(s3, bucket, "tree/").items()} == \
        {f"tree/{k}": (src / k).stat().st_size for k in want}
    down = tmp_path / "down"
    down.mkdir()
    s3cmd("sync", f"s3://{bucket}/tree/", f"{down}/")
    assert tree_digest(down) == want
    (src / "a.txt").write_bytes(b"new a")
    (src / "d/b.bin").unlink()
    s3cmd("sync", "--delete-removed", f"{src}/", f"s3://{bucket}/tree/")
    assert sorted(bucket_listing(s3, bucket, "tree/")) == sorted(f"tree/{k}" for k in tree_digest(src))
    assert s3.get_object(Bucket=bucket, Key="tree/a.txt")["Body"].read() == b"new a"

    # del, then rb fails while not empty and works once empty.
    s3cmd("del", f"s3://{bucket}/single/a.txt")
    assert "single/a.txt" not in bucket_listing(s3, bucket)
    assert s3cmd("rb", f"s3://{bucket}", check=False).returncode != 0
    s3cmd("del", "--recursive", "--force", f"s3://{bucket}/")
    assert bucket_listing(s3, bucket) == {}
    s3cmd("rb", f"s3://{bucket}")
    assert f"s3://{bucket}" not in s3cmd("ls").stdout
