#!/usr/bin/env bash
# Starts the OpenStack Swift peer that setup.sh configured, without systemd (Debian ships no
# swift-init): every daemon runs under start-stop-daemon with a pid file in $SWIFT_RUN_DIR and
# its stdout/stderr in $SWIFT_LOG_DIR/NAME.out; Swift's log lines go through a private rsyslogd
# into $SWIFT_LOG_DIR (swift-proxy.log holds the access log). Daemons already running are left
# alone. Waits until every server answers /healthcheck (60 s at most).
#
#   test/peers/swift/start.sh                      # memcached, rsyslogd, proxy, 4 x (account, container, object)
#   SWIFT_START_REST=1 test/peers/swift/start.sh   # also rsyncd and the background daemons
#
# Environment: everything in env.sh.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=env.sh
. "$here/env.sh"
c=$SWIFT_CONF_DIR

[[ -f $c/proxy-server.conf && -f $c/object.ring.gz ]] ||
  { echo "start.sh: Swift is not configured: run setup.sh" >&2; exit 1; }
# The loopback mount does not survive a reboot.
if [[ $SWIFT_USE_LOOPBACK == 1 ]] && ! mountpoint -q "$SWIFT_MNT"; then
  mkdir -p "$SWIFT_MNT"
  mount -o loop,noatime "$SWIFT_DISK_IMG" "$SWIFT_MNT"
fi
mkdir -p "$SWIFT_RUN_DIR" "$SWIFT_LOG_DIR" "$SWIFT_CACHE_DIR"
chown "$SWIFT_USER:" "$SWIFT_CACHE_DIR"

daemon() { # NAME COMMAND ARGS...
  local name=$1 pidfile=$SWIFT_RUN_DIR/$1.pid
  shift
  if [[ -f $pidfile ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    return 0
  fi
  # --startas, not --exec: Swift's servers are Python scripts.
  start-stop-daemon --start --quiet --background --make-pidfile --pidfile "$pidfile" \
    --output "$SWIFT_LOG_DIR/$name.out" --startas "$1" -- "${@:2}"
  swift_log "started $name (pid $(cat "$pidfile"))"
}

daemon rsyslogd /usr/sbin/rsyslogd -n -f "$c/rsyslog-saio.conf" -i "$SWIFT_RUN_DIR/rsyslogd.internal.pid"
daemon memcached /usr/bin/memcached -u memcache -l "$SWIFT_IP" -p "$MEMCACHED_PORT" -U 0 -m 128
# Let rsyslogd make its socket first, so that the servers' first lines are kept.
for _ in $(seq 10); do [[ -S $SWIFT_RUN_DIR/log ]] && break; sleep 0.2; done

for kind in account container object; do
  for n in 1 2 3 4; do
    daemon "$kind-server-$n" "/usr/bin/swift-$kind-server" "$c/$kind-server/$n.conf"
  done
done
daemon proxy-server /usr/bin/swift-proxy-server "$c/proxy-server.conf"

if [[ $SWIFT_START_REST == 1 ]]; then
  daemon rsyncd /usr/bin/rsync --daemon --no-detach --config="$c/rsyncd-saio.conf"
  for n in 1 2 3 4; do
    for d in replicator auditor updater reconstructor; do
      daemon "object-$d-$n" "/usr/bin/swift-object-$d" "$c/object-server/$n.conf"
    done
    for d in replicator auditor updater sharder; do
      daemon "container-$d-$n" "/usr/bin/swift-container-$d" "$c/container-server/$n.conf"
    done
    for d in replicator auditor reaper; do
      daemon "account-$d-$n" "/usr/bin/swift-account-$d" "$c/account-server/$n.conf"
    done
  done
  daemon object-expirer /usr/bin/swift-object-expirer "$c/object-expirer.conf"
  daemon container-reconciler /usr/bin/swift-container-reconciler "$c/container-reconciler.conf"
fi

ports=$SWIFT_PROXY_PORT
for n in 1 2 3 4; do for off in 0 1 2; do ports+=" $((6200 + 10 * n + off))"; done; done
deadline=$((SECONDS + 60))
for port in $ports; do
  until curl -sf -o /dev/null -m 2 "http://$SWIFT_IP:$port/healthcheck"; do
    if ((SECONDS >= deadline)); then
      echo "start.sh: port $port did not answer /healthcheck within 60 s; see $SWIFT_LOG_DIR" >&2
      exit 1
    fi
    sleep 0.5
  done
done
swift_log "all servers up; proxy http://$SWIFT_IP:$SWIFT_PROXY_PORT"
