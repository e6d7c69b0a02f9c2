#!/usr/bin/python3
"""Deletes the tenant store that a Cairn proxy keeps in an OpenStack Swift's servers.

A Cairn proxy over Swift's storage servers (cairn server --role proxy --ring /etc/swift) keeps
its tenants in one object, /\\x00cairn/auth/tenants, sealed with the cluster secret. A test run
that starts a proxy with a new secret and makes its users anew (scripts/swift-functests.sh with
CAIRN_TEST_OVER_SWIFT) needs a new store: this writes a tombstone over the object on every
primary of Swift's object ring, straight to the object servers (Swift's proxy serves no reserved
name to a client). Usage: forget-cairn-tenants.py [RINGDIR] (default /etc/swift).
"""
import http.client
import sys
import urllib.parse

from swift.common.ring import Ring
from swift.common.utils import Timestamp

ACCOUNT, CONTAINER, OBJECT = '\x00cairn', 'auth', 'tenants'


def main():
    ring_dir = sys.argv[1] if len(sys.argv) > 1 else '/etc/swift'
    part, nodes = Ring(ring_dir, ring_name='object').get_nodes(ACCOUNT, CONTAINER, OBJECT)
    name = urllib.parse.quote('/'.join([ACCOUNT, CONTAINER, OBJECT]))
    ts = Timestamp.now().internal
    failed = 0
    for node in nodes:
        conn = http.client.HTTPConnection(node['ip'], node['port'], timeout=10)
        try:
            conn.request('DELETE', '/%s/%d/%s' % (node['device'], part, name), headers={
                'X-Timestamp': ts, 'X-Backend-Allow-Reserved-Names': 'true'})
            status = conn.getresponse().status
        except OSError as e:
            print('forget-cairn-tenants: %s:%s: %s' % (node['ip'], node['port'], e), file=sys.stderr)
            failed += 1
            continue
        finally:
            conn.close()
        if status not in (204, 404):  # 404: there was none
            print('forget-cairn-tenants: %s:%s: status %d' % (node['ip'], node['port'], status), file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
