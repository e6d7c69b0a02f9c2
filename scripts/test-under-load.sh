#!/usr/bin/env bash
# Runs the whole test suite (scripts/test.sh) several times in a row on a fresh clone, with a CPU
# hog beside it for the whole time, and prints one line per run: when it started, its wall time,
# its result, and the load the machine was under. It is the check that no test depends on how
# fast the machine is (docs/testing.md, "On a busy machine"): every run must pass.
#
# Usage: scripts/test-under-load.sh [RUNS]     (default 3)
# Environment:
#   HOG_WORKERS  CPU-bound workers beside the suite (default: the number of cores), at normal
#                priority; stress-ng --cpu when it is installed or apt-get can install it, else
#                shell loops doing the same.
#   CLONE_DIR    where the fresh clone goes (default: a new directory under /tmp); it is cloned
#                from this repository's HEAD, so commit what you want tested.
#   CAIRN_CACHE  passed on to scripts/test.sh (default: the clone's own .cache).
#   RESULTS      a file the summary lines are appended to as well (default: none).
# Exits non-zero if any run failed. Each run's output is kept in the clone, run-N.log.
set -euo pipefail

runs=${1:-3}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
workers=${HOG_WORKERS:-$(nproc)}
clone=${CLONE_DIR:-$(mktemp -d /tmp/cairn-under-load.XXXXXX)/cairn}

if [ -e "$clone" ]; then
  echo "test-under-load: $clone exists; give a new CLONE_DIR" >&2
  exit 2
fi
git clone --quiet "$here" "$clone"
commit=$(git -C "$clone" rev-parse --short HEAD)
echo "test-under-load: fresh clone of $commit in $clone, $runs runs, $workers CPU hog workers beside each"

if ! command -v stress-ng >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng >/dev/null 2>&1 ||
    (apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng >/dev/null 2>&1) || true
fi

hog_pids=()
start_hog() {
  if command -v stress-ng >/dev/null; then
    stress-ng --cpu "$workers" --timeout 0 --quiet &
    hog_pids+=($!)
    hog="stress-ng --cpu $workers"
  else
    for ((i = 0; i < workers; i++)); do
      bash -c 'while :; do :; done' &
      hog_pids+=($!)
    done
    hog="$workers shell busy loops"
  fi
}
stop_hog() {
  if ((${#hog_pids[@]})); then
    kill "${hog_pids[@]}" 2>/dev/null || true
    wait "${hog_pids[@]}" 2>/dev/null || true
  fi
  hog_pids=()
}
sampler_pid=
trap 'stop_hog; [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null; true' EXIT

# The 1-minute load average every 10 seconds, so that each run can report the load it had.
load_log=$clone/loadavg.log
(while :; do
  printf '%s %s\n' "$(date +%s)" "$(cut -d' ' -f1 /proc/loadavg)"
  sleep 10
done) >"$load_log" &
sampler_pid=$!

start_hog
echo "test-under-load: hog: $hog (pids ${hog_pids[*]})"

failures=0
summary=()
for ((n = 1; n <= runs; n++)); do
  log=$clone/run-$n.log
  begin=$(date +%s)
  begin_human=$(date -u '+%Y-%m-%d %H:%M UTC')
  status=0
  (cd "$clone" && ./scripts/test.sh) >"$log" 2>&1 || status=$?
  end=$(date +%s)
  load=$(awk -v b="$begin" -v e="$end" '$1 >= b && $1 <= e { s += $2; n++; if ($2 > m) m = $2 }
    END { if (n) printf "load average mean %.1f, max %.1f", s / n, m; else print "load not sampled" }' "$load_log")
  result=passed
  if ((status != 0)); then
    result="FAILED ($(grep -m1 '^FAILED' "$log" || echo "exit $status"))"
    failures=$((failures + 1))
  fi
  line="run $n of $runs at $commit: started $begin_human, $((end - begin)) s wall, $result; $load; hog: $hog"
  echo "$line"
  summary+=("$line")
  if [ -n "${RESULTS:-}" ]; then
    echo "$line" >>"$RESULTS"
  fi
done
stop_hog

echo
echo "test-under-load: $((runs - failures)) of $runs runs passed (logs: $clone/run-*.log)"
for line in "${summary[@]}"; do
  echo "  $line"
done
((failures == 0))
