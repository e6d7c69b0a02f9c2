#!/usr/bin/env bash
# Sets up and starts the OpenStack Swift peer: a single-node "Swift All In One" cluster of
# OpenStack Swift 2.30.1 from Debian bookworm's packages, on 127.0.0.1:8080 (tempauth v1.0
# auth, s3api, the users of Swift's functional tests). Cairn's tests compare against it: the
# bench and the client run against it (CAIRN_TEST_SWIFT_AUTH), and scripts/swift-functests.sh
# --baseline records which of Swift's functional tests it passes. See docs/testing.md.
#
#   test/peers/swift/setup.sh                        # install, configure, start, smoke-test
#   SWIFT_SKIP_VERIFY=1 test/peers/swift/setup.sh    # without the smoke test (verify.sh)
#   SWIFT_REMAKE_RINGS=1 test/peers/swift/setup.sh   # rebuild the rings (fresh cluster only)
#
# Idempotent. When a Swift already answers on the proxy port it is reused and nothing is
# changed. Otherwise: installs the missing Debian packages with apt-get, makes a sparse XFS
# image (SWIFT_DISK_SIZE, default 8G) mounted on a loop device for the devices, writes
# /etc/swift, builds the rings unless they exist, starts the servers (start.sh, no systemd
# needed) and runs verify.sh. Needs root and apt-get: without them it exits with status 3
# and says why, and the tests that need the peer skip.
#
# Environment: everything in env.sh (paths, ports, SWIFT_EC, SWIFT_PROXY_WORKERS, ...),
# SWIFT_SKIP_VERIFY, SWIFT_REMAKE_RINGS.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=env.sh
. "$here/env.sh"
proxy=http://$SWIFT_IP:$SWIFT_PROXY_PORT

if info=$(curl -sf -m 3 "$proxy/info" 2>/dev/null); then
  if [[ $info == *'"swift"'* ]]; then
    swift_log "an OpenStack Swift already answers on $proxy: reusing it, nothing changed"
    exit 0
  fi
  echo "setup.sh: $proxy answers but is not an OpenStack Swift (no \"swift\" in /info)" >&2
  exit 1
fi
[[ $(id -u) -eq 0 ]] || { echo "setup.sh: needs root (installs Debian packages, mounts an XFS image)" >&2; exit 3; }
if ! command -v apt-get >/dev/null || ! command -v dpkg-query >/dev/null; then
  echo "setup.sh: needs apt-get (Debian bookworm's swift packages)" >&2
  exit 3
fi

# ---- Debian packages
pkgs=(swift swift-proxy swift-account swift-container swift-object swift-object-expirer
  python3-swiftclient python3-boto3 memcached xfsprogs rsync rsyslog curl)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  swift_log "apt-get install ${missing[*]}"
  # Keep the packages' maintainer scripts from starting services (there may be no init).
  policy=
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    policy=/usr/sbin/policy-rc.d
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }
  [[ -z $policy ]] || rm -f "$policy"
fi
getent passwd "$SWIFT_USER" >/dev/null ||
  { echo "setup.sh: user $SWIFT_USER is missing (Debian's swift package makes it)" >&2; exit 1; }
swift_log "OpenStack Swift $("$PY" -c 'import swift; print(swift.__version__)')"

# ---- storage: 4 servers, devices sdbN (+ sdb(N+4) for the EC policy)
if [[ $SWIFT_USE_LOOPBACK == 1 ]]; then
  mkdir -p "$(dirname "$SWIFT_DISK_IMG")" "$SWIFT_MNT"
  if [[ ! -f $SWIFT_DISK_IMG ]]; then
    swift_log "making a sparse $SWIFT_DISK_SIZE XFS image $SWIFT_DISK_IMG"
    truncate -s "$SWIFT_DISK_SIZE" "$SWIFT_DISK_IMG"
    mkfs.xfs -q -f "$SWIFT_DISK_IMG"
  fi
  mountpoint -q "$SWIFT_MNT" || mount -o loop,noatime "$SWIFT_DISK_IMG" "$SWIFT_MNT"
  for n in 1 2 3 4; do
    mkdir -p "$SWIFT_MNT/$n"
    d=$SWIFT_NODE_PREFIX$n
    if [[ -e $d && ! -L $d ]]; then
      rmdir "$d" || { echo "setup.sh: $d exists, is not a symlink and is not empty" >&2; exit 1; }
    fi
    mkdir -p "$(dirname "$d")"
    ln -sfn "$SWIFT_MNT/$n" "$d"
  done
fi
for n in 1 2 3 4; do
  mkdir -p "$SWIFT_NODE_PREFIX$n/sdb$n" "$SWIFT_NODE_PREFIX$n/sdb$((n + 4))"
  chown -R "$SWIFT_USER:" "$SWIFT_NODE_PREFIX$n/"
done
# Swift splits an object's metadata into 254-byte xattrs; check that ~10 KiB of them fit.
"$PY" - "${SWIFT_NODE_PREFIX}1/sdb1" <<'EOF'
import os, sys
p = os.path.join(sys.argv[1], ".xattr-probe")
open(p, "w").close()
try:
    for i in range(40):
        os.setxattr(p, "user.swift.metadata%d" % i, b"x" * 254)
except OSError as e:
    print("[swift-peer] WARNING: large xattrs fail on %s (%s): objects with much metadata will fail"
          % (sys.argv[1], e), file=sys.stderr)
finally:
    os.unlink(p)
EOF
mkdir -p "$SWIFT_RUN_DIR" "$SWIFT_LOG_DIR" "$SWIFT_CACHE_DIR" "$SWIFT_CONF_DIR"
chown "$SWIFT_USER:" "$SWIFT_CACHE_DIR"

# ---- configuration
c=$SWIFT_CONF_DIR
conf_sum() { { cat "$c"/*.conf "$c"/*/*.conf 2>/dev/null || true; } | md5sum; }
before=$(conf_sum)
logsock=$SWIFT_RUN_DIR/log
hdr="# Written by Cairn's test/peers/swift/setup.sh (a single-node test cluster); re-running it
# overwrites this file."

cat >"$c/swift.conf" <<EOF
$hdr
[swift-hash]
# A test cluster's: must not change once it holds data.
swift_hash_path_prefix = saio-peer-prefix
swift_hash_path_suffix = saio-peer-suffix

[storage-policy:0]
name = gold
policy_type = replication
default = yes

[storage-policy:1]
name = silver
policy_type = replication
EOF
if [[ $SWIFT_EC == 1 ]]; then
  cat >>"$c/swift.conf" <<EOF

[storage-policy:2]
name = ec42
policy_type = erasure_coding
ec_type = liberasurecode_rs_vand
ec_num_data_fragments = 4
ec_num_parity_fragments = 2
EOF
fi

cat >"$c/memcache.conf" <<EOF
$hdr
[memcache]
memcache_servers = $SWIFT_IP:$MEMCACHED_PORT
EOF

# The proxy: Swift's SAIO pipeline, plus s3api before tempauth and domain_remap. tempauth has
# the users Swift's functional tests expect (test/peers/swift/test.conf.in), with two reseller
# prefixes for the service-token tests.
cat >"$c/proxy-server.conf" <<EOF
$hdr
[DEFAULT]
bind_ip = $SWIFT_IP
bind_port = $SWIFT_PROXY_PORT
workers = $SWIFT_PROXY_WORKERS
user = $SWIFT_USER
log_facility = LOG_LOCAL1
log_address = $logsock

[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache etag-quoter domain_remap listing_formats bulk tempurl ratelimit crossdomain s3api tempauth staticweb copy container-quotas account-quotas slo dlo versioned_writes symlink proxy-logging proxy-server

[filter:catch_errors]
use = egg:swift#catch_errors

[filter:gatekeeper]
use = egg:swift#gatekeeper

[filter:healthcheck]
use = egg:swift#healthcheck

[filter:proxy-logging]
use = egg:swift#proxy_logging
# The access log ignores log_address (it uses /dev/log, else UDP): send it to the private
# rsyslogd's UDP input.
access_log_udp_host = $SWIFT_IP
access_log_udp_port = $SWIFT_SYSLOG_UDP_PORT

[filter:cache]
use = egg:swift#memcache

[filter:etag-quoter]
use = egg:swift#etag_quoter
enable_by_default = false

[filter:domain_remap]
use = egg:swift#domain_remap
# Only hosts under this domain are remapped (Swift's functional tests use example.net).
storage_domain = example.net

[filter:listing_formats]
use = egg:swift#listing_formats

[filter:bulk]
use = egg:swift#bulk

[filter:tempurl]
use = egg:swift#tempurl

[filter:ratelimit]
use = egg:swift#ratelimit

[filter:crossdomain]
use = egg:swift#crossdomain

[filter:s3api]
use = egg:swift#s3api
# The compatibility options Swift's s3api functional tests expect.
s3_acl = yes
check_bucket_owner = yes
cors_preflight_allow_origin = *
location = us-east-1

[filter:tempauth]
use = egg:swift#tempauth
reseller_prefix = AUTH, SERVICE
SERVICE_require_group = service
user_admin_admin = admin .admin .reseller_admin
user_test_tester = testing .admin
user_test_tester2 = testing2 .admin
user_test_tester3 = testing3
user_test2_tester2 = testing2 .admin
user_test5_tester5 = testing5 service
user_test6_tester6 = testing6 .reseller_admin

[filter:staticweb]
use = egg:swift#staticweb

[filter:copy]
use = egg:swift#copy

[filter:container-quotas]
use = egg:swift#container_quotas

[filter:account-quotas]
use = egg:swift#account_quotas

[filter:slo]
use = egg:swift#slo
allow_async_delete = True

[filter:dlo]
use = egg:swift#dlo

[filter:versioned_writes]
use = egg:swift#versioned_writes
allow_versioned_writes = true
allow_object_versioning = true

[filter:symlink]
use = egg:swift#symlink

[app:proxy-server]
use = egg:swift#proxy
allow_account_management = true
account_autocreate = true
EOF

# The storage servers: /etc/swift/KIND-server/N.conf (Debian's single-node
# /etc/swift/KIND-server.conf files are left alone and unused).
for kind in object container account; do
  case $kind in object) off=0 ;; container) off=1 ;; account) off=2 ;; esac
  mkdir -p "$c/$kind-server"
  for n in 1 2 3 4; do
    {
      cat <<EOF
$hdr
[DEFAULT]
devices = $SWIFT_NODE_PREFIX$n
mount_check = false
disable_fallocate = true
bind_ip = $SWIFT_IP
bind_port = $((6200 + 10 * n + off))
workers = 1
user = $SWIFT_USER
log_facility = LOG_LOCAL2
log_address = $logsock
recon_cache_path = $SWIFT_CACHE_DIR

[pipeline:main]
pipeline = healthcheck recon $kind-server

[app:$kind-server]
use = egg:swift#$kind

[filter:recon]
use = egg:swift#recon

[filter:healthcheck]
use = egg:swift#healthcheck

[$kind-replicator]
rsync_module = {replication_ip}::$kind{replication_port}

[$kind-auditor]
EOF
      case $kind in
        object) printf '\n[object-reconstructor]\n\n[object-updater]\n\n[object-relinker]\n' ;;
        container) printf '\n[container-updater]\n\n[container-sync]\n\n[container-sharder]\nrsync_module = {replication_ip}::container{replication_port}\n' ;;
        account) printf '\n[account-reaper]\n' ;;
      esac
    } >"$c/$kind-server/$n.conf"
  done
done

# The internal clients of the background daemons (object expirer, container reconciler).
internal_conf() { # PIPELINE [DEFAULT lines] [own section]
  printf '%s\n[DEFAULT]\n%slog_address = %s\n%s\n[pipeline:main]\npipeline = %s\n\n' \
    "$hdr" "$2" "$logsock" "$3" "$1"
  printf '[app:proxy-server]\nuse = egg:swift#proxy\n%s\n' "$4"
  local f
  for f in $1; do
    case $f in
      proxy-server) ;;
      cache) printf '[filter:cache]\nuse = egg:swift#memcache\n\n' ;;
      *) printf '[filter:%s]\nuse = egg:swift#%s\n\n' "$f" "${f//-/_}" ;;
    esac
  done
}
internal_conf "catch_errors proxy-logging cache symlink proxy-server" "" "" \
  "account_autocreate = true" >"$c/internal-client.conf"
internal_conf "catch_errors cache proxy-server" "user = $SWIFT_USER
log_name = object-expirer
log_facility = LOG_LOCAL6
" "
[object-expirer]
interval = 300
" "" >"$c/object-expirer.conf"
internal_conf "catch_errors proxy-logging cache proxy-server" "user = $SWIFT_USER
" "
[container-reconciler]
" "" >"$c/container-reconciler.conf"

# rsync modules of the replicators (used only with SWIFT_START_REST=1).
{
  echo "$hdr"
  printf 'uid = %s\ngid = %s\nlog file = %s/rsyncd.log\naddress = %s\nport = 873\n' \
    "$SWIFT_USER" "$SWIFT_USER" "$SWIFT_LOG_DIR" "$SWIFT_IP"
  for kind in object container account; do
    case $kind in object) off=0 ;; container) off=1 ;; account) off=2 ;; esac
    for n in 1 2 3 4; do
      port=$((6200 + 10 * n + off))
      printf '\n[%s%s]\nmax connections = 25\npath = %s/\nread only = false\nlock file = %s/%s%s.lock\n' \
        "$kind" "$port" "$SWIFT_NODE_PREFIX$n" "$SWIFT_RUN_DIR" "$kind" "$port"
    done
  done
} >"$c/rsyncd-saio.conf"

# Swift logs only to syslog: a private rsyslogd (socket $logsock, not /dev/log; UDP on
# loopback for the access log) files its lines by Debian's /etc/rsyslog.d/swift.conf.
cat >"$c/rsyslog-saio.conf" <<EOF
$hdr
module(load="imuxsock" SysSock.Use="off")
input(type="imuxsock" Socket="$logsock" CreatePath="on")
module(load="imudp")
input(type="imudp" address="$SWIFT_IP" port="$SWIFT_SYSLOG_UDP_PORT")
global(workDirectory="$SWIFT_RUN_DIR")
\$FileCreateMode 0644
\$IncludeConfig /etc/rsyslog.d/swift.conf
*.* $SWIFT_LOG_DIR/other.log
EOF

# ---- rings: never rebuilt once they exist (that would misplace the data)
cd "$c"
if [[ ${SWIFT_REMAKE_RINGS:-0} == 1 ]]; then
  rm -f ./*.builder ./*.ring.gz
fi
mkring() { # NAME REPLICAS PORT_OFFSET DEVICES_PER_SERVER
  local name=$1 replicas=$2 off=$3 per=$4 n port
  [[ -f $name.ring.gz && -f $name.builder ]] && return 0
  rm -f "$name.builder" "$name.ring.gz"
  swift-ring-builder "$name.builder" create "$SWIFT_PART_POWER" "$replicas" 1 >/dev/null
  for n in 1 2 3 4; do
    port=$((6200 + 10 * n + off))
    swift-ring-builder "$name.builder" add "r1z$n-$SWIFT_IP:$port/sdb$n" 1 >/dev/null
    if [[ $per == 2 ]]; then
      swift-ring-builder "$name.builder" add "r1z$n-$SWIFT_IP:$port/sdb$((n + 4))" 1 >/dev/null
    fi
  done
  swift-ring-builder "$name.builder" rebalance >/dev/null || [[ $? == 1 ]] # 1: a warning
  swift_log "built the $name ring"
}
mkring object 3 0 1
mkring object-1 2 0 1
[[ $SWIFT_EC != 1 ]] || mkring object-2 6 0 2
mkring container 3 1 1
mkring account 3 2 1
chown -R "$SWIFT_USER:" "$c"

# ---- start, smoke test
if [[ $before != "$(conf_sum)" ]] && compgen -G "$SWIFT_RUN_DIR/*.pid" >/dev/null; then
  swift_log "configuration changed: restarting"
  "$here/stop.sh"
fi
"$here/start.sh"
[[ ${SWIFT_SKIP_VERIFY:-0} == 1 ]] || "$here/verify.sh"
swift_log "ready: $proxy/auth/v1.0, user test:tester, key testing"
