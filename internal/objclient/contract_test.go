package objclient_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/objclient"
)

// uniqueBucket is a bucket (or container) name that no other test run uses, valid for S3.
func uniqueBucket(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
}

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// hostileKeys are names that break clients which escape too little or too much.
var hostileKeys = []string{
	"with space",
	"plus+sign",
	"per%25cent%",
	"ütf-8 ✓ ключ",
	"question?mark",
	"hash#tag",
	"a/b//c/",
	"sub-delims!$&'()*,;=:@~",
	"brackets[]{}<>|^`\"\\",
}

// contract exercises every method of c against a live store, in a bucket of its own. It is the
// same test for both protocols: what differs between S3 and Swift is the client's business.
func contract(t *testing.T, c objclient.Client, bucket string) {
	ctx := context.Background()
	t.Cleanup(func() { removeBucket(t, c, bucket) })

	if err := c.CreateBucket(ctx, bucket); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	if err := c.CreateBucket(ctx, bucket); err != nil {
		t.Fatalf("create bucket again (already owned must be fine): %v", err)
	}
	if err := c.Check(ctx, bucket, false); err != nil {
		t.Fatalf("check: %v", err)
	}
	if err := c.Check(ctx, "", false); err != nil {
		t.Fatalf("check credentials only: %v", err)
	}
	names, err := c.ListBuckets(ctx)
	if err != nil || !slices.Contains(names, bucket) {
		t.Fatalf("list buckets: %v, %q lacks %q", err, names, bucket)
	}

	t.Run("object", func(t *testing.T) { objectRoundTrip(t, c, bucket) })
	t.Run("hostile-keys", func(t *testing.T) { hostileKeyRoundTrip(t, c, bucket) })
	t.Run("list", func(t *testing.T) { listing(t, c, bucket) })
	t.Run("multipart", func(t *testing.T) { multipart(t, c, bucket) })
	t.Run("abort", func(t *testing.T) { abort(t, c, bucket) })
	t.Run("delete-bucket", func(t *testing.T) { deleteBucket(t, c, bucket) })
}

func objectRoundTrip(t *testing.T, c objclient.Client, bucket string) {
	ctx := context.Background()
	body := randomBytes(100_000, 1)
	md := map[string]string{"color": "blue", "owner-id": "42"}
	pr, err := c.Put(ctx, bucket, "obj", bytes.NewReader(body), int64(len(body)),
		objclient.PutOptions{ContentType: "application/x-test", Metadata: md})
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	if pr.ETag != md5hex(body) {
		t.Errorf("put etag %q, want %q", pr.ETag, md5hex(body))
	}
	info, err := c.Head(ctx, bucket, "obj")
	if err != nil {
		t.Fatalf("head: %v", err)
	}
	if info.Size != int64(len(body)) || info.ETag != pr.ETag || info.ContentType != "application/x-test" ||
		info.LastModified.IsZero() || time.Since(info.LastModified) > time.Hour {
		t.Errorf("head: %+v", info)
	}
	for k, v := range md {
		if info.Metadata[k] != v {
			t.Errorf("head metadata %q = %q, want %q (all: %v)", k, info.Metadata[k], v, info.Metadata)
		}
	}

	var buf bytes.Buffer
	gr, err := c.Get(ctx, bucket, "obj", objclient.GetOptions{W: &buf})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if !bytes.Equal(buf.Bytes(), body) || gr.Bytes != int64(len(body)) || gr.Size != int64(len(body)) ||
		gr.ETag != pr.ETag || gr.TTFB <= 0 || gr.LastModified.IsZero() {
		t.Errorf("get: %d bytes, result %+v", buf.Len(), gr)
	}

	for _, r := range []struct{ start, end int64 }{{10, 19}, {0, 0}, {99_990, -1}, {5, 1 << 40}} {
		buf.Reset()
		gr, err := c.Get(ctx, bucket, "obj", objclient.GetOptions{Ranged: true, RangeStart: r.start, RangeEnd: r.end, W: &buf})
		if err != nil {
			t.Fatalf("get range %v: %v", r, err)
		}
		end := r.end
		if end < 0 || end >= int64(len(body)) {
			end = int64(len(body)) - 1
		}
		want := body[r.start : end+1]
		if !bytes.Equal(buf.Bytes(), want) || gr.Bytes != int64(len(want)) || gr.Size != int64(len(body)) {
			t.Errorf("get range %v: %d bytes, result %+v", r, buf.Len(), gr)
		}
	}
	// A failing destination is the caller's error, not a short body from the network.
	_, err = c.Get(ctx, bucket, "obj", objclient.GetOptions{W: failingWriter{}})
	if err == nil || errors.Is(err, objclient.ErrShortBody) || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("get into a failing writer: %v", err)
	}
	// An empty key would turn an object request into a bucket request.
	if _, err := c.Put(ctx, bucket, "", strings.NewReader("x"), 1, objclient.PutOptions{}); err == nil {
		t.Errorf("put of an empty key succeeded")
	}
	if err := c.Delete(ctx, bucket, ""); err == nil {
		t.Errorf("delete of an empty key succeeded")
	}
	// Discarding (benchmarks) still counts every byte.
	if gr, err := c.Get(ctx, bucket, "obj", objclient.GetOptions{}); err != nil || gr.Bytes != int64(len(body)) {
		t.Errorf("get discarding: %+v, %v", gr, err)
	}

	// An empty object.
	if _, err := c.Put(ctx, bucket, "empty", bytes.NewReader(nil), 0, objclient.PutOptions{}); err != nil {
		t.Fatalf("put empty: %v", err)
	}
	if gr, err := c.Get(ctx, bucket, "empty", objclient.GetOptions{}); err != nil || gr.Bytes != 0 || gr.Size != 0 {
		t.Errorf("get empty: %+v, %v", gr, err)
	}

	// A reader that is not a bytes.Reader (no length known to net/http) is sent with the size
	// given, not chunked.
	if _, err := c.Put(ctx, bucket, "streamed", io.MultiReader(bytes.NewReader(body[:10]), bytes.NewReader(body[10:100])), 100, objclient.PutOptions{}); err != nil {
		t.Fatalf("put streamed: %v", err)
	}
	if info, err := c.Head(ctx, bucket, "streamed"); err != nil || info.Size != 100 {
		t.Errorf("head streamed: %+v, %v", info, err)
	}

	for _, k := range []string{"obj", "empty", "streamed"} {
		if err := c.Delete(ctx, bucket, k); err != nil {
			t.Fatalf("delete %s: %v", k, err)
		}
	}
	if err := c.Delete(ctx, bucket, "obj"); err != nil {
		t.Errorf("delete of a missing object: %v, want nil", err)
	}
	_, err = c.Head(ctx, bucket, "obj")
	if !objclient.IsNotFound(err) {
		t.Errorf("head after delete: %v, want a 404", err)
	}
	_, err = c.Get(ctx, bucket, "obj", objclient.GetOptions{})
	if !objclient.IsNotFound(err) || !strings.HasPrefix(objclient.ErrorKind(err), "404 ") {
		t.Errorf("get after delete: %v (kind %q), want a 404", err, objclient.ErrorKind(err))
	}
}

func hostileKeyRoundTrip(t *testing.T, c objclient.Client, bucket string) {
	ctx := context.Background()
	for _, k := range hostileKeys {
		key := "hostile/" + k
		body := []byte(fmt.Sprintf("body of %q", key))
		if _, err := c.Put(ctx, bucket, key, bytes.NewReader(body), int64(len(body)), objclient.PutOptions{}); err != nil {
			t.Fatalf("put %q: %v", key, err)
		}
		var buf bytes.Buffer
		if _, err := c.Get(ctx, bucket, key, objclient.GetOptions{W: &buf}); err != nil || buf.String() != string(body) {
			t.Fatalf("get %q: %q, %v", key, buf.String(), err)
		}
		if info, err := c.Head(ctx, bucket, key); err != nil || info.Size != int64(len(body)) {
			t.Fatalf("head %q: %+v, %v", key, info, err)
		}
		// A copy within the store names its source in a header: escaped as the URL is.
		if _, err := c.Copy(ctx, bucket, key, bucket, "copied/"+k); err != nil {
			t.Fatalf("copy %q: %v", key, err)
		}
		buf.Reset()
		if _, err := c.Get(ctx, bucket, "copied/"+k, objclient.GetOptions{W: &buf}); err != nil || buf.String() != string(body) {
			t.Fatalf("get the copy of %q: %q, %v", key, buf.String(), err)
		}
		if err := c.Delete(ctx, bucket, "copied/"+k); err != nil {
			t.Fatalf("delete the copy of %q: %v", k, err)
		}
	}
	var oe *objclient.Error
	if _, err := c.Copy(ctx, bucket, "hostile/no such source", bucket, "copied/none"); !errors.As(err, &oe) || oe.Status != 404 {
		t.Errorf("copy of a missing source = %v, want a 404", err)
	}
	p, err := c.List(ctx, bucket, objclient.ListOptions{Prefix: "hostile/"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range p.Objects {
		got = append(got, strings.TrimPrefix(o.Key, "hostile/"))
	}
	want := slices.Clone(hostileKeys)
	slices.Sort(want)
	if !slices.Equal(got, want) || p.Truncated {
		t.Errorf("list of hostile keys:\n got %q\nwant %q", got, want)
	}
	// A prefix and a marker that need escaping in the query.
	p, err = c.List(ctx, bucket, objclient.ListOptions{Prefix: "hostile/p", Marker: "hostile/per%25cent%"})
	if err != nil || len(p.Objects) != 1 || p.Objects[0].Key != "hostile/plus+sign" {
		t.Errorf("list with prefix and marker: %+v, %v", p, err)
	}
	for _, k := range hostileKeys {
		if err := c.Delete(ctx, bucket, "hostile/"+k); err != nil {
			t.Fatalf("delete %q: %v", k, err)
		}
	}
}

func listing(t *testing.T, c objclient.Client, bucket string) {
	ctx := context.Background()
	keys := []string{"dir/a/1", "dir/a/2", "dir/b", "dir/c/1", "dir/d", "dir/e/x/y", "dir/f", "top"}
	for _, k := range keys {
		if _, err := c.Put(ctx, bucket, k, strings.NewReader(k), int64(len(k)), objclient.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, k := range keys {
			c.Delete(context.Background(), bucket, k)
		}
	})

	// Every page size walks the same listing, whatever mix of keys and prefixes a page ends with.
	for limit := 1; limit <= 7; limit++ {
		var objs, prefixes []string
		opts := objclient.ListOptions{Prefix: "dir/", Delimiter: "/", Limit: limit}
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatalf("limit %d: listing does not end", limit)
			}
			p, err := c.List(ctx, bucket, opts)
			if err != nil {
				t.Fatalf("limit %d: %v", limit, err)
			}
			if len(p.Objects)+len(p.Prefixes) > limit {
				t.Fatalf("limit %d: page of %d", limit, len(p.Objects)+len(p.Prefixes))
			}
			for _, o := range p.Objects {
				objs = append(objs, o.Key)
				if o.Size != int64(len(o.Key)) || o.ETag != md5hex([]byte(o.Key)) || o.LastModified.IsZero() {
					t.Errorf("limit %d: entry %+v", limit, o)
				}
			}
			prefixes = append(prefixes, p.Prefixes...)
			if !p.Truncated {
				if p.Next != "" {
					t.Errorf("limit %d: Next %q on the last page", limit, p.Next)
				}
				break
			}
			opts.Marker = p.Next
		}
		if want := []string{"dir/b", "dir/d", "dir/f"}; !slices.Equal(objs, want) {
			t.Errorf("limit %d: objects %q, want %q", limit, objs, want)
		}
		if want := []string{"dir/a/", "dir/c/", "dir/e/"}; !slices.Equal(prefixes, want) {
			t.Errorf("limit %d: prefixes %q, want %q", limit, prefixes, want)
		}
	}

	// Without a delimiter, paging returns every key once, in order.
	var all []string
	opts := objclient.ListOptions{Limit: 3}
	for {
		p, err := c.List(ctx, bucket, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range p.Objects {
			all = append(all, o.Key)
		}
		if !p.Truncated {
			break
		}
		opts.Marker = p.Next
	}
	if !slices.Equal(all, keys) {
		t.Errorf("flat listing %q, want %q", all, keys)
	}
}

const partSize = 5 << 20 // S3's minimum for every part but the last

func multipart(t *testing.T, c objclient.Client, bucket string) {
	ctx := context.Background()
	key := "big/object ü+%"
	body := randomBytes(2*partSize+12345, 2)
	id, err := c.StartUpload(ctx, bucket, key, objclient.PutOptions{ContentType: "video/x-test", Metadata: map[string]string{"kind": "large"}})
	if err != nil {
		t.Fatalf("start upload: %v", err)
	}
	chunks := [][]byte{body[:partSize], body[partSize : 2*partSize], body[2*partSize:]}
	var parts []objclient.Part
	// Out of order, as concurrent uploaders finish.
	for _, i := range []int{2, 0, 1} {
		p, err := c.UploadPart(ctx, bucket, key, id, i+1, bytes.NewReader(chunks[i]), int64(len(chunks[i])))
		if err != nil {
			t.Fatalf("upload part %d: %v", i+1, err)
		}
		if p.Number != i+1 || p.ETag != md5hex(chunks[i]) || p.Size != int64(len(chunks[i])) {
			t.Errorf("part %d: %+v", i+1, p)
		}
		parts = append(parts, p)
	}
	listed, err := c.ListParts(ctx, bucket, key, id)
	if err != nil {
		t.Fatalf("list parts: %v", err)
	}
	slices.SortFunc(parts, func(a, b objclient.Part) int { return a.Number - b.Number })
	if !slices.Equal(listed, parts) {
		t.Errorf("list parts:\n got %+v\nwant %+v", listed, parts)
	}
	res, err := c.CompleteUpload(ctx, bucket, key, id, listed)
	if err != nil {
		t.Fatalf("complete: %v", err)
	}
	if res.ETag == "" {
		t.Errorf("complete: no ETag")
	}
	var buf bytes.Buffer
	gr, err := c.Get(ctx, bucket, key, objclient.GetOptions{W: &buf})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if !bytes.Equal(buf.Bytes(), body) || gr.Size != int64(len(body)) || gr.ETag != res.ETag {
		t.Errorf("get of the completed object: %d bytes (equal %v), %+v, complete ETag %q", buf.Len(), bytes.Equal(buf.Bytes(), body), gr, res.ETag)
	}
	// A range across the first part boundary.
	buf.Reset()
	if _, err := c.Get(ctx, bucket, key, objclient.GetOptions{Ranged: true, RangeStart: partSize - 10, RangeEnd: partSize + 9, W: &buf}); err != nil ||
		!bytes.Equal(buf.Bytes(), body[partSize-10:partSize+10]) {
		t.Errorf("range across parts: %v", err)
	}
	info, err := c.Head(ctx, bucket, key)
	if err != nil || info.Size != int64(len(body)) || info.ContentType != "video/x-test" || info.Metadata["kind"] != "large" || info.ETag != res.ETag {
		t.Errorf("head of the completed object: %+v, %v", info, err)
	}
	p, err := c.List(ctx, bucket, objclient.ListOptions{Prefix: "big/"})
	if err != nil || len(p.Objects) != 1 || p.Objects[0].Key != key || p.Objects[0].Size != int64(len(body)) || p.Objects[0].ETag != res.ETag {
		t.Errorf("listing of the completed object: %+v, %v", p, err)
	}
	if err := c.Delete(ctx, bucket, key); err != nil {
		t.Fatal(err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func abort(t *testing.T, c objclient.Client, bucket string) {
	ctx := context.Background()
	if _, err := c.StartUpload(ctx, bucket+"-missing", "k", objclient.PutOptions{}); !objclient.IsNotFound(err) {
		t.Errorf("start upload in a missing bucket: %v, want a 404", err)
	}
	key := "aborted"
	id, err := c.StartUpload(ctx, bucket, key, objclient.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if parts, err := c.ListParts(ctx, bucket, key, id); err != nil || len(parts) != 0 {
		t.Fatalf("list parts of a new upload: %+v, %v", parts, err)
	}
	if _, err := c.UploadPart(ctx, bucket, key, id, 1, strings.NewReader("part one"), 8); err != nil {
		t.Fatal(err)
	}
	if err := c.AbortUpload(ctx, bucket, key, id); err != nil {
		t.Fatalf("abort: %v", err)
	}
	_, err = c.ListParts(ctx, bucket, key, id)
	if !objclient.IsNotFound(err) {
		t.Errorf("list parts after abort: %v, want a 404", err)
	}
	if _, err := c.Head(ctx, bucket, key); !objclient.IsNotFound(err) {
		t.Errorf("head of an aborted upload's key: %v, want a 404", err)
	}
}

func deleteBucket(t *testing.T, c objclient.Client, bucket string) {
	ctx := context.Background()
	if _, err := c.Put(ctx, bucket, "keeps-it-busy", strings.NewReader("x"), 1, objclient.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	var oe *objclient.Error
	if err := c.DeleteBucket(ctx, bucket); !errors.As(err, &oe) || oe.Status != 409 || oe.Op != "delete-bucket" {
		t.Errorf("delete of a non-empty bucket: %v, want a 409", err)
	}
	removeBucket(t, c, bucket)
	err := c.DeleteBucket(ctx, bucket)
	if !objclient.IsNotFound(err) {
		t.Errorf("delete of a deleted bucket: %v, want a 404", err)
	}
	if err := c.Check(ctx, bucket, false); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("check of a deleted bucket: %v", err)
	}
}

// removeBucket empties and deletes bucket and, for Swift, its segments container; it is
// cleanup, so a bucket already gone is fine.
func removeBucket(t *testing.T, c objclient.Client, bucket string) {
	t.Helper()
	ctx := context.Background()
	for _, b := range []string{bucket, bucket + "_segments"} {
		if c.Protocol() == objclient.ProtocolS3 && b != bucket {
			continue
		}
		opts := objclient.ListOptions{}
		for {
			p, err := c.List(ctx, b, opts)
			if err != nil {
				if !objclient.IsNotFound(err) {
					t.Errorf("cleanup: list %s: %v", b, err)
				}
				break
			}
			for _, o := range p.Objects {
				if err := c.Delete(ctx, b, o.Key); err != nil {
					t.Errorf("cleanup: delete %s/%s: %v", b, o.Key, err)
				}
			}
			if !p.Truncated {
				break
			}
			opts.Marker = p.Next
		}
		if err := c.DeleteBucket(ctx, b); err != nil && !objclient.IsNotFound(err) {
			t.Errorf("cleanup: delete bucket %s: %v", b, err)
		}
	}
}
