"""rclone (Debian's package) against cairn, with an S3 remote configured by environment."""

import hashlib
import os

import pytest

from cairntest import bucket_listing, make_tree, run, tool, tree_digest

MiB = 1 << 20


@pytest.fixture(scope="module")
def rclone(server, tmp_path_factory):
    conf = tmp_path_factory.mktemp("rclone") / "rclone.conf"
    conf.write_text("")
    env = dict(os.environ,
               RCLONE_CONFIG=str(conf),
               RCLONE_CONFIG_CAIRN_TYPE="s3",
               RCLONE_CONFIG_CAIRN_PROVIDER="Other",
               RCLONE_CONFIG_CAIRN_ENV_AUTH="false",
               RCLONE_CONFIG_CAIRN_ACCESS_KEY_ID=server.access_key,
               RCLONE_CONFIG_CAIRN_SECRET_ACCESS_KEY=server.secret_key,
               RCLONE_CONFIG_CAIRN_ENDPOINT=server.endpoint,
               RCLONE_CONFIG_CAIRN_REGION="us-east-1",
               RCLONE_CONFIG_CAIRN_FORCE_PATH_STYLE="true",
               # Multipart for anything over 5 MiB, so that the 12 MiB file goes up in parts.
               RCLONE_S3_UPLOAD_CUTOFF="5M",
               RCLONE_S3_CHUNK_SIZE="5M")
    exe = tool("rclone")

    def rclone(*args, check=True):
        return run([exe, "--low-level-retries", "1", "--retries", "1", *args], env=env, check=check)
    return rclone


def test_rclone_sync_check_ls_delete(rclone, s3, tmp_path):
    bucket = "rclone-" + os.urandom(3).hex()
    rclone("mkdir", f"cairn:{bucket}")
    assert bucket in rclone("lsd", "cairn:").stdout

    src = tmp_path / "src"
    want = make_tree(src, {"x.txt": 33, "dir/y.bin": 256 * 1024, "dir/deeper/z.bin": 4096,
                           "big.bin": 12 * MiB + 1, "empty": 0})
    rclone("sync", src, f"cairn:{bucket}/data")
    listed = bucket_listing(s3, bucket, "data/")
    assert {k: v[0] for k, v in listed.items()} == {f"data/{k}": (src / k).stat().st_size for k in want}
    assert listed["data/big.bin"][1].endswith("-3")  # 5M + 5M + 2M parts

    # rclone check compares sizes and hashes (md5, from the ETag or rclone's own metadata).
    rclone("check", src, f"cairn:{bucket}/data")
    ls = rclone("ls", f"cairn:{bucket}/data").stdout
    assert {line.split(None, 1)[1]: int(line.split(None, 1)[0]) for line in ls.splitlines()} == \
        {k: (src / k).stat().st_size for k in want}
    md5 = rclone("md5sum", f"cairn:{bucket}/data/x.txt").stdout.split()[0]
    assert md5 == hashlib.md5((src / "x.txt").read_bytes()).hexdigest()

    down = tmp_path / "down"
    rclone("sync", f"cairn:{bucket}/data", down)
    assert tree_digest(down) == want

    # Change and delete locally; sync mirrors it; check agrees again.
    (src / "x.txt").write_bytes(b"changed")
    (src / "dir/y.bin").unlink()
    rclone("sync", src, f"cairn:{bucket}/data")
    assert sorted(bucket_listing(s3, bucket, "data/")) == sorted(f"data/{k}" for k in tree_digest(src))
    rclone("check", src, f"cairn:{bucket}/data")
    assert s3.get_object(Bucket=bucket, Key="data/x.txt")["Body"].read() == b"changed"

    rclone("delete", f"cairn:{bucket}/data/dir")
    assert sorted(bucket_listing(s3, bucket, "data/")) == ["data/big.bin", "data/empty", "data/x.txt"]
    rclone("delete", f"cairn:{bucket}")
    assert bucket_listing(s3, bucket) == {}
    rclone("rmdir", f"cairn:{bucket}")
    assert bucket not in rclone("lsd", "cairn:").stdout
    with pytest.raises(Exception):
        s3.head_bucket(Bucket=bucket)
