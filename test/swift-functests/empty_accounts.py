"""Empties the S3 side of Swift's functional tests' accounts before a run.

A run over storage that outlives it (a Cairn proxy over the Swift peer's servers) finds what an
earlier run cut short left behind. The s3api tests clean their account up in their set-up with
boto 2, which cannot page past a key that is not ASCII (it writes the marker into the request
line as it is), so leftover multipart uploads with such names fail the first tests of a run.
This aborts every multipart upload and deletes every object and bucket of each account, paging
with URL-encoded markers. It only warns on what it cannot remove.

Usage: empty_accounts.py ENDPOINT ACCESS:SECRET...
"""
import sys
import urllib.parse
import xml.etree.ElementTree as ET

from boto.s3.connection import OrdinaryCallingFormat, S3Connection

NS = '{http://s3.amazonaws.com/doc/2006-03-01/}'


def quoted(bucket):
    """A bucket name as boto 2 must be given it: it writes bucket names into the request line as
    they are (a Swift container's name may be any UTF-8), and quotes only keys."""
    return urllib.parse.quote(bucket, safe='')


def call(conn, method, bucket, key='', query=''):
    resp = conn.make_request(method, quoted(bucket), key, query_args=query or None)
    body = resp.read()
    if resp.status // 100 != 2:
        raise RuntimeError('%s %s/%s?%s: %d %s' % (method, bucket, key, query, resp.status, body[:200]))


def pages(conn, bucket, query, marker_args):
    """Yields each page (an XML root) of a listing, paged with URL-encoded markers."""
    markers = {}
    while True:
        q = query + ''.join('&%s=%s' % (k, urllib.parse.quote(v, safe='')) for k, v in markers.items())
        resp = conn.make_request('GET', quoted(bucket), query_args=q)
        body = resp.read()
        if resp.status != 200:
            raise RuntimeError('GET %s?%s: %d %s' % (bucket, q, resp.status, body[:200]))
        root = ET.fromstring(body)
        yield root
        if root.findtext(NS + 'IsTruncated') != 'true':
            return
        markers = {arg: urllib.parse.unquote(root.findtext(NS + field) or '') for arg, field in marker_args}


def empty(endpoint, access, secret):
    u = urllib.parse.urlparse(endpoint)
    conn = S3Connection(aws_access_key_id=access, aws_secret_access_key=secret, host=u.hostname, port=u.port,
                        is_secure=False, calling_format=OrdinaryCallingFormat())
    for b in conn.get_all_buckets():
        for root in pages(conn, b.name, 'uploads&encoding-type=url',
                          [('key-marker', 'NextKeyMarker'), ('upload-id-marker', 'NextUploadIdMarker')]):
            for up in root.iter(NS + 'Upload'):
                key = urllib.parse.unquote(up.findtext(NS + 'Key'))
                call(conn, 'DELETE', b.name, key, 'uploadId=' + urllib.parse.quote(up.findtext(NS + 'UploadId'), safe=''))
        for root in pages(conn, b.name, 'versions&encoding-type=url',
                          [('key-marker', 'NextKeyMarker'), ('version-id-marker', 'NextVersionIdMarker')]):
            for v in list(root.iter(NS + 'Version')) + list(root.iter(NS + 'DeleteMarker')):
                key = urllib.parse.unquote(v.findtext(NS + 'Key'))
                call(conn, 'DELETE', b.name, key, 'versionId=' + urllib.parse.quote(v.findtext(NS + 'VersionId'), safe=''))
        call(conn, 'DELETE', b.name)


def main():
    endpoint, failed = sys.argv[1], 0
    for cred in sys.argv[2:]:
        access, _, secret = cred.rpartition(':')
        try:
            empty(endpoint, access, secret)
        except Exception as e:  # a warning: the tests decide whether what is left matters
            print('empty_accounts: %s: %s' % (access, e), file=sys.stderr)
            failed += 1
    return 1 if failed else 0  # the caller warns and goes on


if __name__ == '__main__':
    sys.exit(main())
