#!/usr/bin/env bash
# Installs what the test suite needs, skipping whatever is already there:
#   - Debian packages: rclone (a real S3 client), restic (a backup program), python3-venv (on Debian's own python3),
#     chromium (renders the HTML bench report in internal/bench/htmlreport's browser test),
#     curl, haproxy (in front of a cluster's proxies, configured by `cairn microstore haproxy`), and python3-swift, python3-swiftclient, python3-boto3 (OpenStack Swift 2.30.1,
#     which Swift's functional tests import); swift (swift-ring-builder and Swift's Python
#     ring code, which internal/ring's tests compare Cairn's ring files and builder with);
#   - a Python venv with the pinned real clients of test/clients/requirements.txt
#     (boto3, aws cli v1, s3cmd, pytest) under the cache dir (default .cache/venv);
#   - for Swift's functional tests (test/peers/swift/functests.sh --prepare): swift 2.30.1's
#     test tree from its source distribution on PyPI and a venv with the test runner, both
#     pinned by hash (.cache/swift-2.30.1, .cache/venv-swift).
# Needs root (or sudo) only when a Debian package is missing. Safe to re-run: a second run
# with nothing to do takes about a second.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
cache=${CAIRN_CACHE:-$PWD/.cache}
venv=$cache/venv
requirements=test/clients/requirements.txt

command -v go >/dev/null || { echo "install-test-deps: go is not on PATH" >&2; exit 1; }
command -v python3 >/dev/null || { echo "install-test-deps: python3 is not on PATH" >&2; exit 1; }

# apt_install PKG...: installs Debian packages (root, or sudo if there is one).
apt_install() {
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "install-test-deps: need root to install $*" >&2; exit 1; }
    sudo=(sudo)
  fi
  echo "install-test-deps: apt-get install $*"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "$@"
}

command -v rclone >/dev/null || apt_install rclone
# restic: a backup program, backing up into a versioned bucket with Object Lock (test_backup.py).
command -v restic >/dev/null || apt_install restic
command -v curl >/dev/null || apt_install curl
# haproxy: the load balancer `cairn microstore haproxy` configures (TestHAProxyFromTheDescription).
command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || apt_install haproxy
# Swift's functional tests run on Debian's OpenStack Swift (the version their tree is pinned to).
swift_pkgs=()
for p in python3-swift python3-swiftclient python3-boto3 python3-venv; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || swift_pkgs+=("$p")
done
((${#swift_pkgs[@]} == 0)) || apt_install "${swift_pkgs[@]}"
test/peers/swift/functests.sh --prepare pypi >/dev/null
{ command -v swift-ring-builder >/dev/null && /usr/bin/python3 -c 'import swift.common.ring' 2>/dev/null; } ||
  apt_install swift
# Any browser the htmlreport test would use will do (CAIRN_CHROMIUM names one explicitly);
# Debian's package is chromium.
[[ -n ${CAIRN_CHROMIUM:-} ]] || command -v chromium >/dev/null || command -v chromium-browser >/dev/null ||
  command -v google-chrome >/dev/null || apt_install chromium

stamp="$(sha256sum "$requirements" | cut -d' ' -f1) $(python3 -c 'import sys; print(sys.version.split()[0])')"
if [[ -x $venv/bin/python && -f $venv/.cairn-stamp && $(cat "$venv/.cairn-stamp") == "$stamp" ]] &&
  "$venv/bin/python" -c 'import boto3, awscli, S3, pytest, pytest_timeout' 2>/dev/null; then
  exit 0
fi
echo "install-test-deps: creating $venv"
rm -rf "$venv"
mkdir -p "$cache"
# Debian's own python3 makes venvs only with python3-venv installed.
if ! python3 -m venv "$venv" 2>/dev/null; then
  rm -rf "$venv"
  apt_install python3-venv
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-input -r "$requirements"
echo "$stamp" >"$venv/.cairn-stamp"
"$venv/bin/python" -m pip list --disable-pip-version-check 2>/dev/null |
  grep -Ei '^(awscli|boto3|botocore|s3cmd|pytest) ' | tr -s ' ' | paste -sd, -
rclone version | sed -n 1p  # sed reads everything: no SIGPIPE under pipefail
