package objclient

import (
	"strings"
	"testing"
)

// The decoders read what a store (any store, including a broken or hostile one) sends; they
// may fail but must not panic, and what they accept must be self-consistent.

func FuzzDecodeListV2(f *testing.F) {
	f.Add([]byte(`<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>dir%2F</Prefix>
<KeyCount>3</KeyCount><MaxKeys>3</MaxKeys><Delimiter>%2F</Delimiter><EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>
<Contents><Key>dir/a+b%2Bc%20d</Key><LastModified>2026-11-22T08:06:44.127Z</LastModified><ETag>&quot;5d41402abc4b2a76b9719d911017c592&quot;</ETag><Size>5</Size><StorageClass>STANDARD</StorageClass></Contents>
<CommonPrefixes><Prefix>dir/x%2F</Prefix></CommonPrefixes><CommonPrefixes><Prefix>dir/y/</Prefix></CommonPrefixes>
<NextContinuationToken>ZGlyL3kv</NextContinuationToken></ListBucketResult>`))
	f.Add([]byte(`<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>%zz</Key></Contents></ListBucketResult>`))
	f.Add([]byte(`<ListBucketResult><EncodingType>url</EncodingType><Contents><Key>%zz</Key></Contents></ListBucketResult>`))
	f.Add([]byte(`<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>`))
	f.Add([]byte(`<ListBucketResult><Contents><Size>-1</Size><LastModified>x</LastModified></Contents>`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := decodeListV2(raw)
		if err != nil {
			return
		}
		if p.Truncated != (p.Next != "") {
			t.Fatalf("truncated %v with next %q", p.Truncated, p.Next)
		}
	})
}

func FuzzDecodeListParts(f *testing.F) {
	f.Add([]byte(`<?xml version="1.0" encoding="UTF-8"?>
<ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>b</Bucket><Key>k</Key><UploadId>u</UploadId>
<PartNumberMarker>0</PartNumberMarker><NextPartNumberMarker>2</NextPartNumberMarker><MaxParts>2</MaxParts><IsTruncated>true</IsTruncated>
<Part><PartNumber>1</PartNumber><LastModified>2026-11-22T08:06:44.000Z</LastModified><ETag>"a"</ETag><Size>5242880</Size></Part>
<Part><PartNumber>2</PartNumber><ETag>"b"</ETag><Size>5242880</Size></Part></ListPartsResult>`))
	f.Add([]byte(`<ListPartsResult><IsTruncated>true</IsTruncated></ListPartsResult>`))
	f.Add([]byte(`<ListPartsResult><IsTruncated>false</IsTruncated><Part><PartNumber>x</PartNumber></Part></ListPartsResult>`))
	f.Add([]byte(`<Error><Code>NoSuchUpload</Code></Error>`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		parts, next, err := decodeListParts(raw)
		if err != nil {
			return
		}
		if next != "" && strings.TrimSpace(next) != next {
			t.Fatalf("untrimmed marker %q", next)
		}
		_ = parts
	})
}

func FuzzDecodeListBuckets(f *testing.F) {
	f.Add([]byte(`<?xml version="1.0" encoding="UTF-8"?>
<ListAllMyBucketsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>o</ID></Owner>
<Buckets><Bucket><Name>a</Name><CreationDate>2026-11-22T08:06:44.000Z</CreationDate></Bucket><Bucket><Name>b</Name></Bucket></Buckets>
<ContinuationToken>Yg</ContinuationToken></ListAllMyBucketsResult>`))
	f.Add([]byte(`<ListAllMyBucketsResult><Buckets/></ListAllMyBucketsResult>`))
	f.Add([]byte(`<a><b><c>`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		decodeListBuckets(raw)
	})
}

func FuzzDecodeSwiftObjects(f *testing.F) {
	f.Add([]byte(`[{"subdir": "a/"}, {"bytes": 5, "hash": "5d41402abc4b2a76b9719d911017c592", "name": "c", "content_type": "text/plain", "last_modified": "2026-11-22T08:06:36.904750"}]`))
	f.Add([]byte(`[{"bytes": 10, "hash": "98d0038fc220e4af88c7d4ddaa7f0eb3", "name": "big", "content_type": "text/plain", "last_modified": "2026-11-22T08:06:44.127670", "slo_etag": "\"ae802c1f58f394d46485b7da18c56e9b\""}]`))
	f.Add([]byte(`[{"name": "x", "hash": "abc; s3_etag=def", "bytes": -1, "last_modified": "bad"}]`))
	f.Add([]byte(`[{}]`))
	f.Add([]byte(`{"name": "not a list"}`))
	f.Add([]byte(` `))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, n, last, err := decodeSwiftObjects(raw)
		if err != nil {
			return
		}
		if n != len(p.Objects)+len(p.Prefixes) || (n > 0) != (last != "") {
			t.Fatalf("%d entries, %d objects, %d prefixes, last %q", n, len(p.Objects), len(p.Prefixes), last)
		}
	})
}

func FuzzDecodeSwiftContainers(f *testing.F) {
	f.Add([]byte(`[{"name": "anchors-bench", "count": 0, "bytes": 0, "last_modified": "2026-11-22T06:29:08.375190"}]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`[{"name": 1}]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		names, err := decodeSwiftContainers(raw)
		if err != nil {
			return
		}
		for _, n := range names {
			if n == "" {
				t.Fatal("empty name accepted")
			}
		}
	})
}

func FuzzTextMessage(f *testing.F) {
	f.Add([]byte("<html><h1>Not Found</h1><p>The resource could not be found.</p></html>"))
	f.Add([]byte("Errors:\n/c/1, Etag Mismatch\n"))
	f.Add([]byte("<<>>\xff\n\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m := textMessage(raw)
		if len(m) > maxMessage+len("…") || strings.Contains(m, "\n") {
			t.Fatalf("message %q", m)
		}
	})
}
