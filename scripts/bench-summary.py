#!/usr/bin/env python3
"""Summarize a scripts/bench-swift.sh run directory as markdown tables.

For each test, one row per target: the measured operations' ops/s, MB/s, p50/p99 (the main
operation of the test, or every operation of a mixed workload together), errors, and the
server's CPU seconds per 1,000 requests; ratios are Cairn over each Swift API. Then the
client's own CPU per 1,000 requests, cairn bench against warp, on the same target.
"""
import json
import os
import re
import sys

out = sys.argv[1]
cpu = {}
header = ""
with open(os.path.join(out, "runs.tsv")) as f:
    for line in f:
        if line.startswith("#"):
            header = line[1:].strip()
            continue
        target, test, secs = line.split()
        cpu[(target, test)] = float(secs)

MAIN_OP = {"put4k": "put", "get4k": "get", "put1m": "put", "get1m": "get"}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def measured(report, test):
    """ops/s, MB/s, p50, p99, errors, requests of the measured stages."""
    ops = report.get("ops") or {}
    if test in MAIN_OP:
        s = ops.get(MAIN_OP[test], {})
        lat = s.get("latency_ms", {})
        return (s.get("ops_per_sec", 0), s.get("mb_per_sec", 0), lat.get("p50", 0), lat.get("p99", 0),
                s.get("errors", 0), s.get("operations", 0) + s.get("errors", 0))
    # A mixed workload: the main stage's total (its histogram merges every operation).
    main = [st for st in report.get("stages", []) if st["kind"] == "main"]
    t = main[0]["total"] if main else {}
    lat = t.get("latency_ms", {})
    return (t.get("ops_per_sec", 0), t.get("mb_per_sec", 0), lat.get("p50", 0), lat.get("p99", 0),
            t.get("errors", 0), t.get("operations", 0) + t.get("errors", 0))


targets = ["cairn", "cluster", "over-swift", "swift", "swift-s3"]
names = {"cairn": "Cairn (S3)", "cluster": "Cairn cluster 1+4 (S3)", "over-swift": "Cairn proxy over Swift's servers (S3)",
         "swift": "Swift (native API)", "swift-s3": "Swift (s3api)"}
tests = []
for test in ["put4k", "get4k", "put1m", "get1m", "A", "D"]:
    if any((t, test) in cpu for t in targets):
        tests.append(test)

print(f"Run: {header}\n")
print("| test | target | ops/s | MB/s | p50 ms | p99 ms | errors | server CPU s / 1k req | first row's ops/s ÷ this |")
print("|---|---|---|---|---|---|---|---|---|")
for test in tests:
    rows = {}
    for target in targets:
        r = load(os.path.join(out, f"{target}-{test}.json"))
        if r is None:
            continue
        rows[target] = measured(r, test)
    first = next(iter(rows), None)  # the first target in the order above: the one compared
    base = rows[first][0] if first else 0
    for target, (ops, mb, p50, p99, errs, reqs) in rows.items():
        # The server's CPU covers the whole command, prepare included; per request of the
        # whole command, counted from its stages.
        r = load(os.path.join(out, f"{target}-{test}.json"))
        allreq = sum(st["total"]["operations"] + st["total"]["errors"] for st in r.get("stages", []))
        c = cpu.get((target, test), 0)
        per = f"{1000 * c / allreq:.3f}" if allreq else "-"
        ratio = "" if target == first or not ops else f"{base / ops:.1f}×"
        print(f"| {test} | {names[target]} | {ops:,.1f} | {mb:,.2f} | {p50:.2f} | {p99:.2f} | {errs} | {per} | {ratio} |")

rows = []
for test in ["get4k", "put4k"]:
    c = load(os.path.join(out, f"client-cairn-{test}.json"))
    try:
        wt = open(os.path.join(out, f"client-warp-{test}.time")).read().split()
        wcpu = float(wt[-2]) + float(wt[-1])
        wtxt = open(os.path.join(out, f"client-warp-{test}.txt")).read()
    except (OSError, ValueError, IndexError):
        continue
    m = re.search(r"(GET|PUT)\. Concurrency: \d+\.? ?(?:Ran: [\d.]+s)?\s*\n ?\* Average: [\d.]+ \w+/s, ([\d.]+) obj/s", wtxt)
    if not c or not m:
        continue
    main = [st for st in c["stages"] if st["kind"] == "main"][0]
    cops = main["total"]["ops_per_sec"]
    creq = sum(st["total"]["operations"] + st["total"]["errors"] for st in c["stages"])
    ccpu = c["client_cpu"]["user_seconds"] + c["client_cpu"]["system_seconds"]
    # warp reports its average over the seconds it kept ("Ran: 17s"), but it sent requests for
    # the whole --duration, as cairn bench did: its requests are the average times that.
    wops = float(m.group(2))
    wreq = wops * float(main["seconds"])
    rows.append((test, cops, 1000 * ccpu / creq, wops, 1000 * wcpu / wreq if wreq else 0))
if rows:
    print("\n| load on Cairn | cairn bench ops/s | cairn bench client CPU s / 1k | warp ops/s | warp client CPU s / 1k | cairn bench ÷ warp CPU |")
    print("|---|---|---|---|---|---|")
    for test, cops, cper, wops, wper in rows:
        print(f"| {test} | {cops:,.0f} | {cper:.4f} | {wops:,.0f} | {wper:.4f} | {cper / wper:.2f} |")
