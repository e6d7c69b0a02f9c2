"""python-swiftclient (its Connection API and the `swift` command) against the real cairn binary.

Cairn answers Swift's v1 API on the S3 port: the root user is `root:root` with the root secret key,
and its account AUTH_root holds the same containers as the root key's S3 buckets.
"""

import hashlib
import os
import secrets

import pytest
from swiftclient import client as swc
from swiftclient.exceptions import ClientException

from cairntest import make_tree, run, tool, tree_digest


@pytest.fixture
def conn(server):
    c = swc.Connection(authurl=server.endpoint + "/auth/v1.0", user="root:root", key=server.secret_key,
                       retries=0, timeout=60)
    yield c
    c.close()


@pytest.fixture
def container(conn, request):
    name = request.node.name.replace("[", "-").replace("]", "")[:40] + "-" + secrets.token_hex(3)
    conn.put_container(name)
    return name


def swift_cli(server, *args, check=True):
    return run([tool("swift"), "-A", server.endpoint + "/auth/v1.0", "-U", "root:root", "-K", server.secret_key, *args],
               check=check)


def test_auth(server, conn):
    url, token = conn.get_auth()
    assert url == server.endpoint + "/v1/AUTH_root"
    assert token.startswith("AUTH_tk")
    bad = swc.Connection(authurl=server.endpoint + "/auth/v1.0", user="root:root", key="wrong", retries=0)
    with pytest.raises(ClientException) as e:
        bad.head_account()
    assert e.value.http_status == 401


def test_object_lifecycle(conn, container):
    data = os.urandom(300_000)
    etag = conn.put_object(container, "dir/obj.bin", data, content_type="application/x-test",
                           headers={"X-Object-Meta-Color": "Blue"})
    assert etag == hashlib.md5(data).hexdigest()
    hdrs, body = conn.get_object(container, "dir/obj.bin")
    assert body == data
    assert hdrs["x-object-meta-color"] == "Blue"
    assert hdrs["content-type"] == "application/x-test"
    hdrs, body = conn.get_object(container, "dir/obj.bin", headers={"Range": "bytes=10-19"})
    assert body == data[10:20]

    conn.post_object(container, "dir/obj.bin", headers={"X-Object-Meta-Shape": "round"})
    head = conn.head_object(container, "dir/obj.bin")
    assert head["x-object-meta-shape"] == "round" and "x-object-meta-color" not in head
    assert int(head["content-length"]) == len(data)

    conn.put_object(container, "small.txt", b"hello", headers={"X-Delete-After": "3600"})
    assert "x-delete-at" in conn.head_object(container, "small.txt")

    # A server-side copy.
    conn.copy_object(container, "dir/obj.bin", "/%s/copy.bin" % container)
    assert conn.get_object(container, "copy.bin")[1] == data

    # A bad ETag is refused and stores nothing.
    with pytest.raises(ClientException) as e:
        conn.put_object(container, "bad", b"abc", etag="0" * 32)
    assert e.value.http_status == 422
    with pytest.raises(ClientException) as e:
        conn.head_object(container, "bad")
    assert e.value.http_status == 404

    conn.delete_object(container, "copy.bin")
    with pytest.raises(ClientException) as e:
        conn.get_object(container, "copy.bin")
    assert e.value.http_status == 404


def test_listings(conn, container):
    names = sorted("obj-%03d" % i for i in range(25)) + ["sub/a", "sub/b"]
    for n in names:
        conn.put_object(container, n, n.encode())
    # full_listing pages with marker=, 10 at a time.
    _, listing = conn.get_container(container, limit=10, full_listing=True)
    assert [o["name"] for o in listing] == names
    assert listing[0]["bytes"] == 7 and listing[0]["hash"] == hashlib.md5(b"obj-000").hexdigest()
    _, listing = conn.get_container(container, delimiter="/", prefix="s")
    assert listing == [{"subdir": "sub/"}]
    hdrs, _ = conn.get_container(container)
    assert hdrs["x-container-object-count"] == str(len(names))

    conn.post_container(container, {"X-Container-Meta-Owner": "tests"})
    assert conn.head_container(container)["x-container-meta-owner"] == "tests"

    acct, containers = conn.get_account()
    assert container in [c["name"] for c in containers]
    assert int(acct["x-account-container-count"]) >= 1

    with pytest.raises(ClientException) as e:
        conn.delete_container(container)
    assert e.value.http_status == 409
    for n in names:
        conn.delete_object(container, n)
    conn.delete_container(container)
    with pytest.raises(ClientException) as e:
        conn.head_container(container)
    assert e.value.http_status == 404


def test_swift_command(server, tmp_path, s3):
    name = "cli-" + secrets.token_hex(3)
    src = tmp_path / "src"
    want = make_tree(src, {"a.txt": 10, "d/b.bin": 200_000, "d/e/c.bin": 0, "d/f.bin": 1_000_000})
    run([tool("swift"), "-A", server.endpoint + "/auth/v1.0", "-U", "root:root", "-K", server.secret_key,
         "upload", name, "."], cwd=src)
    listed = swift_cli(server, "list", name).stdout.split()
    assert sorted(listed) == sorted(want)

    stat = swift_cli(server, "stat", name, "d/b.bin").stdout
    assert "Content Length: 200000" in stat
    swift_cli(server, "post", "-m", "color:green", name, "d/b.bin")
    assert "Meta Color: green" in swift_cli(server, "stat", name, "d/b.bin").stdout
    assert "Objects: 4" in swift_cli(server, "stat", name).stdout

    out = tmp_path / "out"
    swift_cli(server, "download", name, "-D", str(out))
    assert tree_digest(out) == want

    # The same objects through S3.
    got = s3.get_object(Bucket=name, Key="d/b.bin")
    assert got["Metadata"]["color"] == "green"
    assert hashlib.sha256(got["Body"].read()).hexdigest() == want["d/b.bin"]

    caps = swift_cli(server, "capabilities").stdout
    assert "max_file_size" in caps and "slo" in caps.split() and "bulk_delete" in caps.split() and "dlo" not in caps.split()

    swift_cli(server, "delete", name)
    assert swift_cli(server, "list").stdout.split().count(name) == 0


def test_segmented_upload(server, tmp_path, s3):
    """`swift upload --use-slo -S`: a static large object over segments in <container>_segments."""
    name = "slo-" + secrets.token_hex(3)
    src = tmp_path / "src"
    want = make_tree(src, {"big.bin": 2_500_000, "small.bin": 1000})
    run([tool("swift"), "-A", server.endpoint + "/auth/v1.0", "-U", "root:root", "-K", server.secret_key,
         "upload", "--use-slo", "-S", "1000000", name, "."], cwd=src)
    stat = swift_cli(server, "stat", name, "big.bin").stdout
    assert "Content Length: 2500000" in stat
    assert "Manifest:" in stat or "Static Large Object" in stat or "X-Static-Large-Object" in stat, stat
    segs = swift_cli(server, "list", name + "_segments").stdout.split()
    assert len(segs) == 3, segs

    out = tmp_path / "out"
    swift_cli(server, "download", name, "-D", str(out))
    assert tree_digest(out) == want
    got = s3.get_object(Bucket=name, Key="big.bin")["Body"].read()
    assert hashlib.sha256(got).hexdigest() == want["big.bin"]

    # Deleting the manifest deletes its segments too (multipart-manifest=delete).
    swift_cli(server, "delete", name, "big.bin")
    assert swift_cli(server, "list", name + "_segments").stdout.split() == []
    swift_cli(server, "delete", name)
    swift_cli(server, "delete", name + "_segments")


def test_bulk_delete(server, conn):
    """`swift delete CONTAINER` of many objects uses bulk delete, which /info offers."""
    name = "bulk-" + secrets.token_hex(3)
    conn.put_container(name)
    for i in range(30):
        conn.put_object(name, "o%02d" % i, b"x")
    out = swift_cli(server, "delete", name).stdout.split()
    assert len(out) == 31, out  # each object, then the container
    with pytest.raises(ClientException) as e:
        conn.head_container(name)
    assert e.value.http_status == 404


def test_s3_to_swift(conn, s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"via s3", Metadata={"foo": "bar"}, ContentType="text/x-s3")
    hdrs, body = conn.get_object(bucket, "k")
    assert body == b"via s3"
    assert hdrs["x-object-meta-foo"] == "bar"
    assert hdrs["content-type"] == "text/x-s3"
