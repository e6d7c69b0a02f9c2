"""A pytest plugin for scripts/s3-conformance.sh: writes one JSON line per test (its id, its
outcome and its markers) to $S3_CONFORMANCE_REPORT, so that the script can count by area.

Loaded with -p report (PYTHONPATH names this directory)."""
import json
import os

_out = None
_seen = {}


def pytest_configure(config):
    global _out
    path = os.environ.get("S3_CONFORMANCE_REPORT")
    if path:
        _out = open(path, "w")


def pytest_runtest_logreport(report):
    # A test's outcome is its call's, unless its setup or teardown failed or it was skipped.
    if _out is None:
        return
    if report.when == "call" or (report.when == "setup" and not report.passed) or (
            report.when == "teardown" and report.failed):
        prev = _seen.get(report.nodeid)
        if prev in ("failed", "error"):
            return
        outcome = report.outcome
        if report.when != "call" and report.failed:
            outcome = "error"
        _seen[report.nodeid] = outcome


def pytest_collection_modifyitems(session, config, items):
    config._s3c_markers = {item.nodeid: sorted({m.name for m in item.iter_markers()}) for item in items}


def pytest_sessionfinish(session, exitstatus):
    if _out is None:
        return
    markers = getattr(session.config, "_s3c_markers", {})
    for nodeid, outcome in sorted(_seen.items()):
        _out.write(json.dumps({"id": nodeid, "outcome": outcome, "markers": markers.get(nodeid, [])}) + "\n")
    _out.close()
