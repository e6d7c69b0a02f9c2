"""Fixtures that run the real cairn binary for the real-client tests.

The binary is CAIRN_BIN if set (scripts/test.sh builds it once), else built here with
`go build ./cmd/cairn`. Each test module gets its own server: `cairn server --listen
127.0.0.1:0` with freshly generated root keys and its data in a temporary directory.
"""

import os
import re
import secrets
import subprocess
from pathlib import Path

import pytest

from cairntest import CairnServer

REPO = Path(__file__).resolve().parents[2]

# Nothing from the developer's own AWS or client setup may leak into the tests.
for _name in list(os.environ):
    if _name.startswith(("AWS_", "BOTO_", "RCLONE_", "S3CMD_", "CAIRN_")) and _name not in ("CAIRN_BIN", "CAIRN_TEST_CLUSTER"):
        del os.environ[_name]
os.environ["AWS_CONFIG_FILE"] = os.devnull
os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
os.environ["AWS_EC2_METADATA_DISABLED"] = "true"


@pytest.fixture(scope="session")
def cairn_bin(tmp_path_factory):
    if os.environ.get("CAIRN_BIN"):
        path = Path(os.environ["CAIRN_BIN"]).resolve()
        assert path.is_file(), f"CAIRN_BIN={path} is not a file"
        return path
    out = tmp_path_factory.mktemp("bin") / "cairn"
    subprocess.run(["go", "build", "-o", str(out), "./cmd/cairn"], cwd=REPO, check=True)
    return out


@pytest.fixture(scope="module")
def server(cairn_bin, tmp_path_factory):
    base = tmp_path_factory.mktemp("cairn")
    (base / "data").mkdir()
    s = CairnServer(cairn_bin, base / "data", base / "server.log").start()
    yield s
    s.stop()


@pytest.fixture
def s3(server):
    return server.client()


@pytest.fixture
def bucket(s3, request):
    name = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[:40].strip("-") + "-" + secrets.token_hex(3)
    s3.create_bucket(Bucket=name)
    return name


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    srv = getattr(item, "funcargs", {}).get("server")
    if report.failed and isinstance(srv, CairnServer):
        report.sections.append(("cairn server output (last lines)", srv.tail()))
