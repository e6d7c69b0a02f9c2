"""S3's access rules as S3 decides them, and Swift's container ACLs as Swift decides them, through
boto3 and raw HTTP (anonymous), against the real server (and, with CAIRN_TEST_CLUSTER, a cluster).

Every combination of bucket ACL x object ACL x caller is tried: a bucket's READ lists it and reads
no object (each object's own ACL decides who reads it), a bucket's WRITE writes, and the owner
may do everything. Then Swift's read ACLs: `.r:*` reads every object, `.rlistings` lists, an
account entry lists and reads; and each API shows the other's grants.
"""

import json
import secrets
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from botocore.exceptions import ClientError

from cairntest import REGION

import boto3
from botocore.config import Config

BUCKET_ACLS = ["private", "public-read", "public-read-write", "authenticated-read", "read:other"]
OBJECT_ACLS = ["private", "public-read", "authenticated-read", "read:other"]
CALLERS = ["owner", "other", "stranger", "anonymous"]
ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"


def grants_read(acl, caller):
    """Whether a canned ACL (or read:ACCOUNT) grants READ to the caller, as S3 decides."""
    if acl in ("public-read", "public-read-write"):
        return True
    if acl == "authenticated-read":
        return caller != "anonymous"
    if acl.startswith("read:"):
        return caller == acl.split(":", 1)[1]
    return False


def admin(server, cairn_bin, *args):
    out = subprocess.run([str(cairn_bin), "admin", *args, "--json", "--endpoint", server.endpoint,
                          "--access-key", server.access_key, "--secret-key", server.secret_key],
                         check=True, capture_output=True, text=True, timeout=60)
    return json.loads(out.stdout) if out.stdout.strip() else None


def client_for(server, creds):
    cfg = Config(region_name=REGION, signature_version="s3v4", s3={"addressing_style": "path"},
                 retries={"max_attempts": 1, "mode": "standard"})
    return boto3.session.Session().client("s3", endpoint_url=server.endpoint, aws_access_key_id=creds["access_key"],
                                          aws_secret_access_key=creds["secret_key"], config=cfg)


def anon(server, method, path, headers=None, data=None):
    req = urllib.request.Request(server.endpoint + path, method=method, headers=headers or {}, data=data)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read(), dict(e.headers)


def status_of(call):
    try:
        call()
        return 200
    except ClientError as e:
        return int(e.response["ResponseMetadata"]["HTTPStatusCode"])


@pytest.fixture(scope="module")
def tenants(server, cairn_bin):
    """Three accounts: acme (owns the buckets), other (named in grants), stranger (any
    authenticated user); each with an administrator, whose S3 and Swift keys are returned."""
    suffix = secrets.token_hex(3)
    creds = {}
    for role in ("owner", "other", "stranger"):
        account = {"owner": "acme", "other": "other", "stranger": "stranger"}[role] + suffix
        admin(server, cairn_bin, "account", "create", account)
        creds[role] = admin(server, cairn_bin, "user", "create", f"{account}:boss", "--admin")
    # In a cluster a new key reaches the proxies within the tenant store's poll (2 s).
    for role, c in creds.items():
        cl = client_for(server, c)
        deadline = time.monotonic() + 60
        while True:
            try:
                cl.list_buckets()
                break
            except ClientError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
    return creds, suffix


def canned_or_grant(kind, acl, other_account):
    """The put_* arguments of an ACL of the matrix: a canned ACL or a READ grant."""
    if acl.startswith("read:"):
        return {"GrantRead": f'id="{other_account}"'}
    return {"ACL": acl}


def test_s3_acl_matrix(server, tenants):
    creds, suffix = tenants
    clients = {role: client_for(server, c) for role, c in creds.items()}
    owner = clients["owner"]
    other_account = creds["other"]["account"]
    failures = []
    checked = 0
    for bacl in BUCKET_ACLS:
        bucket = f"m-{bacl.replace(':', '-')}-{suffix}"
        owner.create_bucket(Bucket=bucket, **canned_or_grant("bucket", bacl, other_account))
        for oacl in OBJECT_ACLS:
            owner.put_object(Bucket=bucket, Key=f"obj-{oacl}", Body=f"bytes of {oacl}".encode(),
                             **canned_or_grant("object", oacl, other_account))
        for caller in CALLERS:
            owns = caller == "owner"

            def call(op, key=None, body=b"x"):
                if caller == "anonymous":
                    path = f"/{bucket}" + (f"/{key}" if key else "")
                    method = {"get": "GET", "head": "HEAD", "list": "GET", "put": "PUT"}[op]
                    st, _, _ = anon(server, method, path, data=body if op == "put" else None)
                    return st
                c = clients[caller]
                return status_of({
                    "get": lambda: c.get_object(Bucket=bucket, Key=key)["Body"].read(),
                    "head": lambda: c.head_object(Bucket=bucket, Key=key),
                    "list": lambda: c.list_objects_v2(Bucket=bucket),
                    "put": lambda: c.put_object(Bucket=bucket, Key=key, Body=body),
                }[op])

            for oacl in OBJECT_ACLS:
                want = 200 if owns or grants_read(oacl, caller) else 403
                for op in ("get", "head"):
                    got = call(op, f"obj-{oacl}")
                    checked += 1
                    if got != want:
                        failures.append(f"bucket {bacl} / object {oacl} / {caller} {op}: {got}, want {want}")
            want = 200 if owns or grants_read(bacl, caller) else 403
            got = call("list")
            checked += 1
            if got != want:
                failures.append(f"bucket {bacl} / {caller} list: {got}, want {want}")
            want = 200 if owns or bacl == "public-read-write" else 403
            got = call("put", f"new-by-{caller}")
            checked += 1
            if got != want:
                failures.append(f"bucket {bacl} / {caller} put: {got}, want {want}")
    assert not failures, f"{len(failures)} of {checked} answers differ from S3's:\n" + "\n".join(failures)


def test_private_object_in_public_bucket(server, tenants):
    """An object made private in a public bucket: 403 for everyone but those its ACL or a
    policy names."""
    creds, suffix = tenants
    owner, other, stranger = (client_for(server, creds[r]) for r in ("owner", "other", "stranger"))
    bucket = f"pub-{suffix}"
    owner.create_bucket(Bucket=bucket, ACL="public-read")
    owner.put_object(Bucket=bucket, Key="secret", Body=b"s", ACL="private")
    owner.put_object(Bucket=bucket, Key="open", Body=b"o", ACL="public-read")
    assert anon(server, "GET", f"/{bucket}/secret")[0] == 403
    assert anon(server, "GET", f"/{bucket}/open")[0] == 200
    st, body, _ = anon(server, "GET", f"/{bucket}")
    assert st == 200 and b"<Key>secret</Key>" in body  # the listing is public
    for c in (other, stranger):
        assert status_of(lambda: c.get_object(Bucket=bucket, Key="secret")) == 403
    # A public object made private again closes at once.
    owner.put_object_acl(Bucket=bucket, Key="open", ACL="private")
    assert anon(server, "GET", f"/{bucket}/open")[0] == 403
    # A policy naming the other account opens the private object to it, and to nobody else.
    policy = {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"AWS": creds["other"]["account"]}, "Action": "s3:GetObject",
        "Resource": f"arn:aws:s3:::{bucket}/secret"}]}
    owner.put_bucket_policy(Bucket=bucket, Policy=json.dumps(policy))
    assert other.get_object(Bucket=bucket, Key="secret")["Body"].read() == b"s"
    assert status_of(lambda: stranger.get_object(Bucket=bucket, Key="secret")) == 403
    assert anon(server, "GET", f"/{bucket}/secret")[0] == 403


def swift_login(server, creds):
    req = urllib.request.Request(server.endpoint + "/auth/v1.0", headers={
        "X-Auth-User": f"{creds['account']}:{creds['user']}", "X-Auth-Key": creds["swift_key"]})
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.headers["X-Storage-Url"], r.headers["X-Auth-Token"]


def swift(method, url, token=None, headers=None, data=None):
    h = dict(headers or {})
    if token:
        h["X-Auth-Token"] = token
    req = urllib.request.Request(url, method=method, headers=h, data=data)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read(), r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.read(), e.headers


# Swift read ACL -> who reads an object, who lists the container (anonymous via Swift and S3).
SWIFT_CASES = [
    ("", {"other": False, "anonymous": False}, {"other": False, "anonymous": False}),
    (".r:*", {"other": True, "anonymous": True}, {"other": False, "anonymous": False}),
    (".r:*,.rlistings", {"other": True, "anonymous": True}, {"other": True, "anonymous": True}),
    ("OTHER", {"other": True, "anonymous": False}, {"other": True, "anonymous": False}),
]


@pytest.mark.parametrize("read_acl,reads,lists", SWIFT_CASES, ids=["none", "r-star", "r-star-listings", "account"])
def test_swift_acl_matrix(server, tenants, read_acl, reads, lists):
    """Swift's container ACLs keep Swift's meaning, through Swift and through S3; the object's
    own S3 ACL stays private throughout, and S3 shows the Swift grants truthfully."""
    creds, suffix = tenants
    url, token = swift_login(server, creds["owner"])
    other_url, other_token = swift_login(server, creds["other"])
    other_s3, owner_s3 = client_for(server, creds["other"]), client_for(server, creds["owner"])
    container = f"sw-{secrets.token_hex(3)}"
    acl = read_acl.replace("OTHER", creds["other"]["account"])
    hdrs = {"X-Container-Read": acl} if acl else {}
    assert swift("PUT", f"{url}/{container}", token, hdrs)[0] in (201, 202)
    assert swift("PUT", f"{url}/{container}/obj", token, data=b"swift bytes")[0] == 201
    account_path = url.rsplit("/", 1)[1]
    for caller in ("other", "anonymous"):
        tok = other_token if caller == "other" else None
        want = 200 if reads[caller] else (401 if caller == "anonymous" else 403)
        assert swift("GET", f"{other_url.rsplit('/', 1)[0]}/{account_path}/{container}/obj", tok)[0] == want, (acl, caller, "swift get")
        want = (200, 204) if lists[caller] else ((401,) if caller == "anonymous" else (403,))
        assert swift("GET", f"{other_url.rsplit('/', 1)[0]}/{account_path}/{container}", tok)[0] in want, (acl, caller, "swift list")
    # Through S3, where the container is a bucket shared by its ACL.
    if acl:
        st = anon(server, "GET", f"/{container}/obj")[0]
        assert st == (200 if reads["anonymous"] else 403), (acl, "s3 anonymous get", st)
        st = anon(server, "GET", f"/{container}")[0]
        assert st == (200 if lists["anonymous"] else 403), (acl, "s3 anonymous list", st)
        st = status_of(lambda: other_s3.get_object(Bucket=container, Key="obj"))
        assert st == (200 if reads["other"] else 403), (acl, "s3 other get", st)
    # S3 shows the Swift grants in its own meaning: object READ for who reads, bucket READ for
    # who lists.
    oacl = owner_s3.get_object_acl(Bucket=container, Key="obj")["Grants"]
    bacl = owner_s3.get_bucket_acl(Bucket=container)["Grants"]
    if ".r:*" in acl:
        assert {"Grantee": {"Type": "Group", "URI": ALL_USERS}, "Permission": "READ"} in oacl
    if "rlistings" in acl:
        assert {"Grantee": {"Type": "Group", "URI": ALL_USERS}, "Permission": "READ"} in bacl
    if read_acl == "OTHER":
        ids = [(g["Grantee"].get("ID"), g["Permission"]) for g in oacl + bacl]
        assert ids.count((creds["other"]["account"], "READ")) == 2, ids
    if not acl:
        assert len(oacl) == 1 and len(bacl) == 1  # the owner's FULL_CONTROL only
    # Put back as read, the ACL does not make Swift's grants S3's: dropping the Swift ACL drops them.
    owner_s3.put_object_acl(Bucket=container, Key="obj", AccessControlPolicy={
        "Owner": {"ID": creds["owner"]["account"]}, "Grants": oacl})
    if acl:
        assert swift("POST", f"{url}/{container}", token, {"X-Remove-Container-Read": "x"})[0] == 204
        # S3's cache of the bucket's state lasts 5 s; the bound only ends a wait that never ends.
        deadline = time.monotonic() + 120
        while anon(server, "GET", f"/{container}/obj")[0] != 403:
            assert time.monotonic() < deadline, "the object stayed public after its Swift ACL went"
            time.sleep(0.5)


def test_swift_shows_s3_grants(server, tenants):
    creds, suffix = tenants
    owner_s3 = client_for(server, creds["owner"])
    url, token = swift_login(server, creds["owner"])
    bucket = f"shown-{suffix}"
    owner_s3.create_bucket(Bucket=bucket, ACL="public-read")
    owner_s3.put_bucket_acl(Bucket=bucket, GrantRead="uri=" + ALL_USERS, GrantWrite=f'id="{creds["other"]["account"]}"')
    st, _, hdrs = swift("HEAD", f"{url}/{bucket}", token)
    assert st == 204
    assert hdrs.get("X-Cairn-S3-Acl") == f"READ:AllUsers,WRITE:{creds['other']['account']}", dict(hdrs)
    assert hdrs.get("X-Container-Read") is None  # S3's READ is not Swift's read
