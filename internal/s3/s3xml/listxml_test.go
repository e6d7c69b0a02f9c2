package s3xml

import (
	"bytes"
	"encoding/xml"
	"math/rand/v2"
	"testing"
)

func TestListXMLMatchesEncodingXML(t *testing.T) {
	names := []string{"", "plain/key.txt", "a&b<c>d\"e'f", "tab\there", "nl\nx\r", "ünïcödé/日本", "\x01ctrl", "bad\xffutf8", "]]>", "%2F+ ~"}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() string { return names[rng.IntN(len(names))] }
	for i := range 300 {
		marker, n := pick(), rng.IntN(5)
		startAfter, token := pick(), pick()
		r := ListBucketResult{Xmlns: Namespace, Name: pick(), Prefix: pick(), NextMarker: pick(), StartAfter: &startAfter,
			NextContToken: pick(), MaxKeys: rng.IntN(1001), Delimiter: pick(), EncodingType: pick(), IsTruncated: i%2 == 0}
		if i%3 == 0 {
			r.Marker = &marker
		}
		if i%5 != 0 {
			r.ContToken = &token
		}
		if i%4 == 0 {
			r.KeyCount = &n
		}
		for range rng.IntN(4) {
			o := ObjectInfo{Key: pick(), LastModified: "2026-11-22T06:00:00.000Z", ETag: `"abc"`, Size: rng.Int64N(1 << 40), StorageClass: "STANDARD"}
			if rng.IntN(2) == 0 {
				o.Owner = &Owner{ID: pick(), DisplayName: pick()}
			}
			if rng.IntN(3) == 0 {
				o.ChecksumAlgorithm = []string{"CRC32"}
			}
			r.Contents = append(r.Contents, o)
		}
		for range rng.IntN(3) {
			r.CommonPrefixes = append(r.CommonPrefixes, CommonPrefix{Prefix: pick()})
		}
		var want bytes.Buffer
		if err := xml.NewEncoder(&want).Encode(r); err != nil {
			t.Fatal(err)
		}
		if got := r.AppendXML(nil); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("case %d:\n got %s\nwant %s", i, got, want.Bytes())
		}
	}
}

func BenchmarkListXML1000(b *testing.B) {
	r := ListBucketResult{Xmlns: Namespace, Name: "bucket", MaxKeys: 1000}
	for i := range 1000 {
		r.Contents = append(r.Contents, ObjectInfo{Key: "obj-" + string(rune('a'+i%26)) + "/0000012345", LastModified: "2026-11-22T06:00:00.000Z", ETag: `"0123456789abcdef0123456789abcdef"`, Size: 4096, StorageClass: "STANDARD"})
	}
	b.Run("append", func(b *testing.B) {
		for b.Loop() {
			r.AppendXML(nil)
		}
	})
	b.Run("encoding/xml", func(b *testing.B) {
		for b.Loop() {
			xml.NewEncoder(&bytes.Buffer{}).Encode(r)
		}
	})
}
