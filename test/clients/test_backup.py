"""Backup software against cairn: restic and rclone into a versioned bucket with Object Lock
(the ransomware-proof setup backup vendors document), then a restore, byte for byte."""

import json
import os
import shutil
import time
from datetime import datetime, timedelta, timezone

import pytest
from botocore.exceptions import ClientError

from cairntest import make_tree, run, tool, tree_digest

MiB = 1 << 20


def locked_bucket(s3, prefix):
    """A bucket with Object Lock (so versioning on) and a default GOVERNANCE retention of a day."""
    bucket = prefix + "-" + os.urandom(3).hex()
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    s3.put_object_lock_configuration(Bucket=bucket, ObjectLockConfiguration={
        "ObjectLockEnabled": "Enabled",
        "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}})
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    return bucket


def all_versions(s3, bucket):
    versions, markers = [], []
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket):
        versions += page.get("Versions", [])
        markers += page.get("DeleteMarkers", [])
    return versions, markers


def test_restic_backup_and_restore_into_a_locked_bucket(server, s3, tmp_path):
    bucket = locked_bucket(s3, "restic")
    env = dict(os.environ,
               AWS_ACCESS_KEY_ID=server.access_key, AWS_SECRET_ACCESS_KEY=server.secret_key,
               RESTIC_REPOSITORY=f"s3:{server.endpoint}/{bucket}/repo",
               RESTIC_PASSWORD="correct horse battery staple",
               RESTIC_CACHE_DIR=str(tmp_path / "cache"))
    restic = tool("restic")

    def r(*args, check=True):
        return run([restic, *args], env=env, check=check, timeout=600)

    src = tmp_path / "src"
    want = make_tree(src, {"a.txt": 1000, "docs/b.bin": 300 * 1024, "docs/deep/c.bin": 9 * MiB + 7, "empty": 0})
    r("init")
    r("backup", str(src))
    # A second backup after a change: new data and a new snapshot, the old ones kept.
    (src / "a.txt").write_bytes(os.urandom(2000))
    second = tree_digest(src)
    r("backup", str(src))
    snaps = r("snapshots", "--json").stdout
    assert snaps.count('"id"') == 2

    for i, expect in ((0, want), (1, second)):
        out = tmp_path / f"restore{i}"
        snap_id = json.loads(snaps)[i]["id"]
        r("restore", snap_id, "--target", str(out))
        got = tree_digest(out / src.relative_to("/"))
        assert got == expect, f"snapshot {i} restored different bytes"
    r("check", "--read-data")

    # Ransomware (or a mistaken prune) deleting the repository's objects only adds delete
    # markers: every version is still there, locked, and the repository can be brought back.
    versions, _ = all_versions(s3, bucket)
    assert versions and all(v["Key"].startswith("repo/") for v in versions)
    keys = sorted({v["Key"] for v in versions})
    attack = [s3.delete_object(Bucket=bucket, Key=k) for k in keys]
    assert all(a["DeleteMarker"] for a in attack)
    with pytest.raises(ClientError) as e:
        s3.delete_object(Bucket=bucket, Key=versions[0]["Key"], VersionId=versions[0]["VersionId"])
    assert e.value.response["Error"]["Code"] == "AccessDenied"
    assert r("snapshots", check=False).returncode != 0  # the repository is gone from view
    # Undo: remove the attack's delete markers (not those of restic's own deletes, such as of
    # its lock files): the locked versions are current again.
    for k, a in zip(keys, attack):
        s3.delete_object(Bucket=bucket, Key=k, VersionId=a["VersionId"])
    out = tmp_path / "after-attack"
    r("restore", "latest", "--target", str(out))
    assert tree_digest(out / src.relative_to("/")) == second


def test_rclone_versions_in_a_locked_bucket(server, s3, tmp_path):
    bucket = locked_bucket(s3, "rclone-lock")
    conf = tmp_path / "rclone.conf"
    conf.write_text("")
    env = dict(os.environ, RCLONE_CONFIG=str(conf), RCLONE_CONFIG_CAIRN_TYPE="s3", RCLONE_CONFIG_CAIRN_PROVIDER="Other",
               RCLONE_CONFIG_CAIRN_ENV_AUTH="false", RCLONE_CONFIG_CAIRN_ACCESS_KEY_ID=server.access_key,
               RCLONE_CONFIG_CAIRN_SECRET_ACCESS_KEY=server.secret_key, RCLONE_CONFIG_CAIRN_ENDPOINT=server.endpoint,
               RCLONE_CONFIG_CAIRN_REGION="us-east-1", RCLONE_CONFIG_CAIRN_FORCE_PATH_STYLE="true",
               RCLONE_S3_UPLOAD_CUTOFF="5M", RCLONE_S3_CHUNK_SIZE="5M")
    rclone = tool("rclone")

    def rc(*args):
        return run([rclone, "--low-level-retries", "1", "--retries", "1", *args], env=env)

    src = tmp_path / "src"
    first = make_tree(src, {"x.txt": 100, "dir/y.bin": 6 * MiB + 1})
    rc("sync", src, f"cairn:{bucket}/data")
    before = datetime.now(timezone.utc) + timedelta(seconds=1)
    # Files change and one goes: the sync overwrites and deletes, the versions stay.
    (src / "x.txt").write_bytes(os.urandom(200))
    os.remove(src / "dir" / "y.bin")
    shutil.rmtree(src / "dir")
    time.sleep(2)  # so that the time between the syncs names the first state
    second = tree_digest(src)
    rc("sync", src, f"cairn:{bucket}/data")
    now = tmp_path / "now"
    rc("copy", f"cairn:{bucket}/data", now)
    assert tree_digest(now) == second
    # rclone lists the old versions and copies the bucket as it was at a time.
    listed = rc("--s3-versions", "lsf", "-R", f"cairn:{bucket}/data").stdout.split()
    assert any(name.startswith("x-v") and name.endswith(".txt") for name in listed), listed
    back = tmp_path / "back"
    rc("--s3-version-at", before.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "copy", f"cairn:{bucket}/data", back)
    assert tree_digest(back) == first
