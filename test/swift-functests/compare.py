"""Reads and compares results of OpenStack Swift's functional tests (see
scripts/swift-functests.sh).

  compare.py results RUN_DIR
      prints "STATUS TEST_ID" for each test in RUN_DIR/*.subunit (STATUS: success, fail, skip)
  compare.py details RUN_DIR TEST_ID...
      prints the end of what each named test left in RUN_DIR/*.subunit (its traceback), so that
      a run that fails says why without its logs (CI shows only the end of the output)
  compare.py compare [--filtered] [--when CONDITION]... BASELINE EXPECTED RESULTS
      checks that every test in BASELINE (the tests OpenStack Swift passes) has succeeded in
      RESULTS, unless a line of EXPECTED matches it. EXPECTED holds one regular expression per
      line (matched against the whole test id), then "#" and the reason (which names the
      section of docs/api.md that lists the feature as unsupported). A line that starts with
      "@CONDITION " applies only to a run given --when CONDITION (one-policy: the server has a
      single storage policy, so the tests that need two skip). --filtered: the run was
      restricted, so baseline tests missing from RESULTS are not counted as failures.
Exit status 1 when the check fails.
"""

import glob
import os
import re
import sys


def read_results(run_dir):
    import subunit
    import testtools

    class Collect(testtools.StreamResult):
        def __init__(self):
            super().__init__()
            self.status_of = {}

        def status(self, test_id=None, test_status=None, **kw):
            if not test_id or test_status not in ("success", "fail", "skip", "xfail", "uxsuccess"):
                return
            self.status_of[test_id] = {"xfail": "success", "uxsuccess": "fail"}.get(test_status, test_status)

    out = {}
    for path in sorted(glob.glob(os.path.join(run_dir, "*.subunit"))):
        r = Collect()
        with open(path, "rb") as fh:
            # A suite the filter left empty holds stestr's "No tests in repository" as text;
            # non_subunit_name passes such text by instead of failing on it.
            subunit.ByteStreamToStreamResult(fh, non_subunit_name="stdout").run(r)
        out.update(r.status_of)
    return out


def read_details(run_dir, wanted, max_lines=30):
    """Returns {test_id: text} of the attachments (tracebacks) of the tests in wanted."""
    import subunit
    import testtools

    class Collect(testtools.StreamResult):
        def __init__(self):
            super().__init__()
            self.text = {}

        def status(self, test_id=None, file_name=None, file_bytes=None, **kw):
            if test_id in wanted and file_bytes:
                self.text.setdefault(test_id, []).append(
                    "[%s] %s" % (file_name, bytes(file_bytes).decode("utf-8", "replace")))

    out = {}
    for path in sorted(glob.glob(os.path.join(run_dir, "*.subunit"))):
        r = Collect()
        with open(path, "rb") as fh:
            subunit.ByteStreamToStreamResult(fh, non_subunit_name="stdout").run(r)
        for test_id, parts in r.text.items():
            lines = "".join(parts).splitlines()
            out[test_id] = "\n".join(lines[-max_lines:])
    return out


def read_expected(path, conditions=()):
    rules = []
    with open(path) as fh:
        for n, line in enumerate(fh, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            pattern, _, reason = line.partition("#")
            pattern, reason = pattern.strip(), reason.strip()
            if pattern.startswith("@"):
                condition, _, pattern = pattern[1:].partition(" ")
                if condition not in conditions:
                    continue
                pattern = pattern.strip()
            if not reason:
                sys.exit("%s:%d: an expected failure needs a reason after '#'" % (path, n))
            rules.append((re.compile(pattern + r"\Z"), pattern, reason))
    return rules


def compare(baseline_path, expected_path, results_path, filtered, conditions=()):
    with open(baseline_path) as fh:
        baseline = [l.strip() for l in fh if l.strip()]
    rules = read_expected(expected_path, conditions)
    results = {}
    with open(results_path) as fh:
        for line in fh:
            status, _, test_id = line.strip().partition(" ")
            results[test_id] = status
    regressions, expected, used, stale = [], 0, {}, []
    passed = 0
    for test_id in baseline:
        status = results.get(test_id)
        if status is None and filtered:
            continue
        rule = next((r for r in rules if r[0].match(test_id)), None)
        if status == "success":
            passed += 1
            if rule:
                stale.append((test_id, rule[1]))
            continue
        if rule:
            expected += 1
            used.setdefault(rule[1], []).append(test_id)
            continue
        regressions.append((test_id, status or "missing"))
    total = sum(1 for t in baseline if t in results or not filtered)
    cairn = list(results.values())
    print("Cairn: %d passed, %d failed, %d skipped of %d tests run" % (
        cairn.count("success"), cairn.count("fail"), cairn.count("skip"), len(cairn)))
    print("Of the %d tests OpenStack Swift passes: %d pass on Cairn, %d fail as expected "
          "(unsupported features, %d rules), %d fail unexpectedly" % (
              total, passed, expected, len(used), len(regressions)))
    for pattern, ids in sorted(used.items(), key=lambda kv: -len(kv[1])):
        reason = next(r[2] for r in rules if r[1] == pattern)
        print("  expected: %4d  %s  (%s)" % (len(ids), pattern, reason))
    for test_id, pattern in stale:
        print("  NOTE: %s passes now; expected-failures.txt rule %r may be narrowed" % (test_id, pattern))
    for test_id, status in regressions:
        print("  UNEXPECTED %s: %s" % (status.upper(), test_id))
    return 1 if regressions else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "results":
        for test_id, status in sorted(read_results(argv[2]).items()):
            print(status, test_id)
        return 0
    if len(argv) >= 4 and argv[1] == "details":
        details = read_details(argv[2], set(argv[3:]))
        for test_id in argv[3:]:
            print("---- %s" % test_id)
            print(details.get(test_id, "(nothing recorded)"))
        return 0
    if len(argv) >= 5 and argv[1] == "compare":
        filtered, conditions, args = False, [], []
        rest = iter(argv[2:])
        for a in rest:
            if a == "--filtered":
                filtered = True
            elif a == "--when":
                conditions.append(next(rest, ""))
            else:
                args.append(a)
        if len(args) != 3:
            sys.exit(__doc__)
        return compare(args[0], args[1], args[2], filtered, conditions)
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
