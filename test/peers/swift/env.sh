# Settings of the OpenStack Swift peer, sourced by setup.sh, start.sh, stop.sh and verify.sh.
# Every value can be overridden from the environment. They describe a throw-away single-node
# test cluster on loopback ("Swift All In One"), not a production one.
# shellcheck shell=bash

# Debian runs Swift as this user (the swift package creates it). Swift reads
# /etc/swift/swift.conf whatever SWIFT_CONF_DIR says, so change it only for a dry run.
SWIFT_USER=${SWIFT_USER:-swift}
SWIFT_CONF_DIR=${SWIFT_CONF_DIR:-/etc/swift}

# Storage: Swift keeps object metadata in extended attributes, and ext4 refuses more than
# about 3.5 KiB of them per inode, so the devices live on a sparse loopback XFS image.
# SWIFT_USE_LOOPBACK=0 puts the device directories on the root filesystem instead.
SWIFT_USE_LOOPBACK=${SWIFT_USE_LOOPBACK:-1}
SWIFT_DISK_IMG=${SWIFT_DISK_IMG:-/srv/swift-disk}
SWIFT_DISK_SIZE=${SWIFT_DISK_SIZE:-8G}
SWIFT_MNT=${SWIFT_MNT:-/mnt/sdb1}
# The four storage servers' device roots: ${SWIFT_NODE_PREFIX}1 .. 4 (e.g. /srv/node1/sdb1).
SWIFT_NODE_PREFIX=${SWIFT_NODE_PREFIX:-/srv/node}

# Pid files, logs, recon cache.
SWIFT_RUN_DIR=${SWIFT_RUN_DIR:-/var/run/swift-saio}
SWIFT_LOG_DIR=${SWIFT_LOG_DIR:-/var/log/swift}
SWIFT_CACHE_DIR=${SWIFT_CACHE_DIR:-/var/cache/swift}

# Network: everything on loopback. Storage server N (1..4) listens on 62N0 (object),
# 62N1 (container) and 62N2 (account).
SWIFT_IP=${SWIFT_IP:-127.0.0.1}
SWIFT_PROXY_PORT=${SWIFT_PROXY_PORT:-8080}
SWIFT_PROXY_WORKERS=${SWIFT_PROXY_WORKERS:-1}
MEMCACHED_PORT=${MEMCACHED_PORT:-11211}
SWIFT_SYSLOG_UDP_PORT=${SWIFT_SYSLOG_UDP_PORT:-5140} # the private rsyslogd's UDP input

# Rings and storage policies: gold (3 replicas, default), silver (2 replicas) and, with
# SWIFT_EC=1, ec42 (erasure coding 4+2).
SWIFT_PART_POWER=${SWIFT_PART_POWER:-10}
SWIFT_EC=${SWIFT_EC:-1}

# 1: start.sh also starts the background daemons (replicators, auditors, updaters, ...).
SWIFT_START_REST=${SWIFT_START_REST:-0}

# Debian's own python3, the one that has python3-swift (python3 on PATH may be another).
PY=${PY:-/usr/bin/python3}

swift_log() { echo "[swift-peer] $*" >&2; }
