"""The cairn process and small helpers for the real-client tests (see conftest.py)."""

import hashlib
import os
import re
import secrets
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from shutil import which

import boto3
import pytest
from botocore.config import Config

ENDPOINT_RE = re.compile(r"^cairn: S3 endpoint (http://\S+)\s*$")
# How long a server (or a local cluster) may take to print its endpoint and answer /healthz. It
# only stops one that will never be ready: a loaded machine may take many times the usual second.
START_TIMEOUT = 120
REGION = "us-east-1"


class CairnServer:
    """One cairn process; endpoint, keys and the log of what it printed."""

    def __init__(self, binary, data_dir, log_path, access_key=None, secret_key=None, extra_args=()):
        self.binary = Path(binary)
        self.extra_args = list(extra_args)
        self.data_dir = Path(data_dir)
        self.log_path = Path(log_path)
        self.access_key = access_key or "CAIRN" + secrets.token_hex(8).upper()
        self.secret_key = secret_key or secrets.token_hex(20)
        self.endpoint = None
        self.proc = None
        self._lines = []
        self._lock = threading.Lock()

    @property
    def host_port(self):
        return self.endpoint.split("://", 1)[1].rstrip("/")

    def start(self):
        # CAIRN_TEST_CLUSTER (e.g. "--storage 4 --proxies 1"): a local cluster of processes.
        topology = os.environ.get("CAIRN_TEST_CLUSTER", "").split()
        mode = ["local-cluster", *topology] if topology else ["server"]
        args = [str(self.binary), *mode, "--data", str(self.data_dir), "--listen", "127.0.0.1:0",
                "--root-access-key", self.access_key, "--root-secret-key", self.secret_key, *self.extra_args]
        env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                     cwd=self.log_path.parent, text=True, bufsize=1)
        found = threading.Event()
        log = open(self.log_path, "a", encoding="utf-8")

        def pump(stream, watch):
            for line in stream:
                with self._lock:
                    self._lines.append(line.rstrip("\n"))
                    log.write(line)
                    log.flush()
                m = ENDPOINT_RE.match(line.rstrip("\n")) if watch else None
                if m and not found.is_set():
                    self.endpoint = m.group(1)
                    found.set()

        self._threads = [threading.Thread(target=pump, args=(self.proc.stdout, True), daemon=True),
                         threading.Thread(target=pump, args=(self.proc.stderr, False), daemon=True)]
        for th in self._threads:
            th.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not found.wait(0.05):
            if self.proc.poll() is not None:
                raise RuntimeError(f"cairn exited ({self.proc.returncode}) before printing its endpoint:\n{self.tail()}")
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"cairn printed no endpoint line in {START_TIMEOUT}s:\n{self.tail()}")
        last = None
        while time.monotonic() < deadline:
            try:
                # A slow answer is waited for (up to the deadline), not cut off and asked again.
                with urllib.request.urlopen(self.endpoint + "/healthz",
                                            timeout=max(deadline - time.monotonic(), 1)) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, OSError) as e:
                last = e
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"GET /healthz never answered 200 ({last}):\n{self.tail()}")

    def stop(self, timeout=15):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def tail(self, n=60):
        with self._lock:
            return "\n".join(self._lines[-n:])

    def client(self, secret_key=None, **config):
        """A boto3 S3 client with boto3's defaults (CRC32 checksums when supported)."""
        cfg = Config(region_name=REGION, signature_version="s3v4", s3={"addressing_style": "path"},
                     retries={"max_attempts": 1, "mode": "standard"}, **config)
        return boto3.session.Session().client(
            "s3", endpoint_url=self.endpoint, aws_access_key_id=self.access_key,
            aws_secret_access_key=secret_key or self.secret_key, config=cfg)


def tool(name):
    """Path of a client program: the venv's own (aws, s3cmd) first, then PATH."""
    local = Path(sys.executable).parent / name
    if local.exists():
        return str(local)
    found = which(name)
    if not found:
        pytest.fail(f"{name} is not installed: run scripts/install-test-deps.sh")
    return found


def run(args, env=None, timeout=300, check=True, cwd=None):
    """Runs a client command, returns CompletedProcess; fails the test with its output if asked."""
    p = subprocess.run([str(a) for a in args], env=env, cwd=cwd, capture_output=True, text=True,
                       timeout=timeout)
    if check and p.returncode != 0:
        pytest.fail(f"{' '.join(map(str, args))} exited {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def tree_digest(root):
    """{relative path: sha256} of every file under root."""
    root = Path(root)
    return {p.relative_to(root).as_posix(): sha256_file(p) for p in sorted(root.rglob("*")) if p.is_file()}


def make_tree(root, files):
    """Writes {relative path: size} under root with random bytes; returns tree_digest(root)."""
    root = Path(root)
    for rel, size in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(os.urandom(size))
    return tree_digest(root)


def bucket_listing(s3, bucket, prefix=""):
    """{key: (size, etag)} of the bucket, through boto3 list_objects_v2."""
    out = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for o in page.get("Contents", []):
            out[o["Key"]] = (o["Size"], o["ETag"].strip('"'))
    return out
