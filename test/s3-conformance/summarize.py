"""Counts an S3 conformance run (scripts/s3-conformance.sh) by area.

  summarize.py REPORT.jsonl [--failed]

REPORT.jsonl: one JSON object per test (id, outcome, markers), as report.py writes it. Prints
the totals, then passed/run by area (the areas of issue 29's table first), and with --failed
the id of every test that did not pass."""
import json
import sys

# (area, test) -> bool, first match wins: markers where the suite has them, else the name.
AREAS = [
    ("SSE", lambda t, m: "encryption" in m or "bucket_encryption" in m or "sse" in t or "encryption" in t),
    ("bucket policy", lambda t, m: "bucket_policy" in m or "policy" in t),
    ("auth headers", lambda t, m: "test_headers.py" in t or "auth_aws2" in m or "auth_aws4" in m or "auth_common" in m),
    ("checksums", lambda t, m: "checksum" in m or "checksum" in t),
    ("conditional", lambda t, m: "conditional_write" in m or "conditional" in t or "_if_" in t),
    ("CORS", lambda t, m: "cors" in t),
    ("ACLs", lambda t, m: "object_ownership" in m or "acl" in t or "grant" in t or "ownership" in t),
    ("multipart", lambda t, m: "multipart" in t),
    ("versioning", lambda t, m: "versioning" in m or "versioning" in t or "version" in t),
    ("object lock", lambda t, m: "object_lock" in m or "lock" in t or "retention" in t or "legal_hold" in t),
    ("tagging", lambda t, m: "tagging" in m or "tagging" in t),
    ("lifecycle", lambda t, m: any(x.startswith("lifecycle") for x in m) or "lifecycle" in t),
    ("listing", lambda t, m: "list_objects_v2" in m or "list" in t),
    ("copy", lambda t, m: "copy" in m or "copy" in t),
]


def area_of(test_id, markers):
    name = test_id.lower()
    for area, match in AREAS:
        if match(name, set(markers)):
            return area
    return "other"


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    rows = [json.loads(l) for l in open(argv[1]) if l.strip()]
    by = {}
    for r in rows:
        a = by.setdefault(area_of(r["id"], r["markers"]), [0, 0])
        if r["outcome"] == "skipped":
            continue
        a[1] += 1
        a[0] += r["outcome"] == "passed"
    run = sum(1 for r in rows if r["outcome"] != "skipped")
    passed = sum(1 for r in rows if r["outcome"] == "passed")
    skipped = len(rows) - run
    print("%d tests: %d passed, %d failed, %d skipped (%.1f%% of those run)" % (
        len(rows), passed, run - passed, skipped, 100.0 * passed / max(run, 1)))
    print("| area | passed | of |")
    print("|---|---|---|")
    order = [a for a, _ in AREAS] + ["other"]
    for area in order:
        if area in by:
            print("| %s | %d | %d |" % (area, by[area][0], by[area][1]))
    if "--failed" in argv:
        for r in rows:
            if r["outcome"] not in ("passed", "skipped"):
                print("%s %s [%s]" % (r["outcome"].upper(), r["id"], area_of(r["id"], r["markers"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
