#!/usr/bin/env bash
# Stops every daemon start.sh started, by its pid file in $SWIFT_RUN_DIR (the Swift servers
# first, then memcached and rsyslogd, so that their last log lines are kept). Data, configs
# and rings stay; start.sh starts the peer again.
#
#   test/peers/swift/stop.sh
#   SWIFT_UNMOUNT=1 test/peers/swift/stop.sh   # also unmount the loopback XFS image
#
# Environment: everything in env.sh, SWIFT_UNMOUNT.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=env.sh
. "$here/env.sh"

stop_one() { # PIDFILE
  local name
  name=$(basename "$1" .pid)
  if start-stop-daemon --stop --quiet --pidfile "$1" --retry TERM/15/KILL/5 --remove-pidfile; then
    swift_log "stopped $name"
  else
    rm -f "$1" # not running any more
  fi
}

shopt -s nullglob
for pidfile in "$SWIFT_RUN_DIR"/*.pid; do
  case $(basename "$pidfile") in
    memcached.pid | rsyslogd.pid | rsyslogd.internal.pid) ;;
    *) stop_one "$pidfile" ;;
  esac
done
for pidfile in "$SWIFT_RUN_DIR/memcached.pid" "$SWIFT_RUN_DIR/rsyslogd.pid"; do
  [[ ! -f $pidfile ]] || stop_one "$pidfile"
done
rm -f "$SWIFT_RUN_DIR/rsyslogd.internal.pid"

if [[ ${SWIFT_UNMOUNT:-0} == 1 ]] && mountpoint -q "$SWIFT_MNT"; then
  umount "$SWIFT_MNT"
  swift_log "unmounted $SWIFT_MNT"
fi
