# Prints what OpenStack Swift's own ring code (swift.common.ring.Ring) makes of a ring file, as
# JSON, for the Go tests to compare with: usage: swiftring.py RINGFILE PREFIX SUFFIX HANDOFFS [NAME...]
# (NAME is account[/container[/object]]). Exits 3 when Swift's Python code is not installed.
import json
import sys

try:
    from swift.common import utils
    from swift.common.ring import Ring
except ImportError as e:
    print("swift not importable: %s" % e, file=sys.stderr)
    sys.exit(3)

path, prefix, suffix, handoffs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
utils.HASH_PATH_PREFIX = prefix.encode()
utils.HASH_PATH_SUFFIX = suffix.encode()
ring = Ring(path)
out = {
    "part_power": ring.part_power,
    "replica_count": ring.replica_count,
    "version": ring.version,
    "devs": [None if d is None else {
        "id": d["id"], "region": d["region"], "zone": d["zone"], "ip": d["ip"],
        "port": d["port"], "device": d["device"], "weight": d["weight"],
        "replication_ip": d.get("replication_ip"), "replication_port": d.get("replication_port"),
        "meta": d.get("meta", ""),
    } for d in ring.devs],
    "primaries": [],
    "handoffs": [],
    "names": {},
}
for part in range(ring.partition_count):
    out["primaries"].append([d["id"] for d in ring.get_part_nodes(part)])
    more = []
    for d in ring.get_more_nodes(part):
        if len(more) >= handoffs:
            break
        more.append(d["id"])
    out["handoffs"].append(more)
for name in sys.argv[5:]:
    parts = name.split("/", 2)
    out["names"][name] = ring.get_part(*parts)
json.dump(out, sys.stdout)
