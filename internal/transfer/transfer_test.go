package transfer_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/objclient"
	"github.com/cairn-store/cairn/internal/transfer"
)

// The tests are named TestClient* so that `go test -run Client` runs everything behind
// `cairn put/get/ls/rm`.

func TestClientTransfersS3(t *testing.T) {
	transfers(t, startCairn(t), transfer.MinS3PartSize)
}

// Swift has no minimum segment size, so its parts can be small and the test quick.
func TestClientTransfersSwift(t *testing.T) {
	transfers(t, swiftClient(t), 1*MiB)
}

// transfers is what every protocol must pass, with parts of partSize.
func transfers(t *testing.T, c objclient.Client, partSize int64) {
	bucket := newBucket(t, c)
	t.Run("small", func(t *testing.T) { smallFile(t, c, bucket) })
	t.Run("multipart", func(t *testing.T) { multipart(t, c, bucket, partSize) })
	t.Run("resume-upload", func(t *testing.T) { resumeUpload(t, c, bucket, partSize) })
	t.Run("resume-download", func(t *testing.T) { resumeDownload(t, c, bucket, partSize) })
	t.Run("changed-object", func(t *testing.T) { changedObject(t, c, bucket, partSize) })
	t.Run("hostile-keys", func(t *testing.T) { hostileKeys(t, c, bucket, partSize) })
	t.Run("list-remove", func(t *testing.T) { listRemove(t, c, bucket) })
}

func smallFile(t *testing.T, c objclient.Client, bucket string) {
	ctx := context.Background()
	data := randomBytes(100_000, 1)
	src := writeFile(t, "small.bin", data)
	var last [2]int64
	res, err := transfer.Upload(ctx, c, src, bucket, "small", transfer.UploadOptions{
		Options:     transfer.Options{Progress: func(done, total int64) { last = [2]int64{done, total} }},
		ContentType: "application/x-small", Metadata: map[string]string{"origin": "test"},
		StateDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Parts != 1 || res.Size != int64(len(data)) || res.Transferred != int64(len(data)) || res.ETag == "" {
		t.Errorf("result %+v", res)
	}
	if last != [2]int64{int64(len(data)), int64(len(data))} {
		t.Errorf("last progress %v, want done = total = %d", last, len(data))
	}
	info, err := c.Head(ctx, bucket, "small")
	if err != nil || info.ContentType != "application/x-small" || info.Metadata["origin"] != "test" {
		t.Errorf("head: %+v, %v", info, err)
	}

	dst := filepath.Join(t.TempDir(), "small.out")
	res, err = transfer.Download(ctx, c, bucket, "small", dst, transfer.DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fileBytes(t, dst), data) || res.Parts != 1 || res.Transferred != int64(len(data)) {
		t.Errorf("download: %+v, bytes equal %v", res, bytes.Equal(fileBytes(t, dst), data))
	}
	if exists(dst + transfer.PartialSuffix) {
		t.Error("partial file left behind")
	}

	var buf bytes.Buffer
	if _, err := transfer.DownloadTo(ctx, c, bucket, "small", &buf, transfer.DownloadOptions{}); err != nil || !bytes.Equal(buf.Bytes(), data) {
		t.Errorf("download to a writer: %v, equal %v", err, bytes.Equal(buf.Bytes(), data))
	}

	// An empty file is an object too.
	empty := writeFile(t, "empty", nil)
	if _, err := transfer.Upload(ctx, c, empty, bucket, "empty", transfer.UploadOptions{StateDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	dst = filepath.Join(t.TempDir(), "empty.out")
	if _, err := transfer.Download(ctx, c, bucket, "empty", dst, transfer.DownloadOptions{}); err != nil || len(fileBytes(t, dst)) != 0 {
		t.Errorf("download of an empty object: %v", err)
	}

	// A missing object is named as such.
	_, err = transfer.Download(ctx, c, bucket, "missing/key", filepath.Join(t.TempDir(), "x"), transfer.DownloadOptions{})
	var nf *transfer.NotFoundError
	if !errors.As(err, &nf) || err.Error() != "no such object "+bucket+"/missing/key" {
		t.Errorf("download of a missing object: %v", err)
	}
	if _, err := transfer.Upload(ctx, c, filepath.Join(t.TempDir(), "nope"), bucket, "k", transfer.UploadOptions{}); err == nil ||
		!strings.Contains(err.Error(), "no such file") {
		t.Errorf("upload of a missing file: %v", err)
	}
}

func multipart(t *testing.T, c objclient.Client, bucket string, partSize int64) {
	ctx := context.Background()
	data := randomBytes(int(3*partSize+12345), 2)
	src := writeFile(t, "big.bin", data)
	stateDir := t.TempDir()
	var progressCalls int
	var last [2]int64
	res, err := transfer.Upload(ctx, c, src, bucket, "big", transfer.UploadOptions{
		Options: transfer.Options{PartSize: partSize, Threshold: partSize, Concurrency: 3,
			Progress: func(done, total int64) { progressCalls++; last = [2]int64{done, total} }},
		ContentType: "application/x-big", StateDir: stateDir,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Parts != 4 || res.PartSize != partSize || res.Transferred != int64(len(data)) || res.Resumed != 0 {
		t.Errorf("result %+v", res)
	}
	if progressCalls < 2 || last != [2]int64{int64(len(data)), int64(len(data))} {
		t.Errorf("%d progress calls, last %v", progressCalls, last)
	}
	if files := stateFiles(t, stateDir); len(files) != 0 {
		t.Errorf("state files left after a finished upload: %v", files)
	}
	if got := objectBytes(t, c, bucket, "big"); !bytes.Equal(got, data) {
		t.Fatalf("the object (%d bytes) is not the file (%d bytes)", len(got), len(data))
	}
	if info, err := c.Head(ctx, bucket, "big"); err != nil || info.ContentType != "application/x-big" {
		t.Errorf("head: %+v, %v", info, err)
	}

	hc := &hookedClient{Client: c}
	dst := filepath.Join(t.TempDir(), "big.out")
	res, err = transfer.Download(ctx, hc, bucket, "big", dst, transfer.DownloadOptions{
		Options: transfer.Options{PartSize: partSize, Threshold: partSize, Concurrency: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fileBytes(t, dst), data) {
		t.Fatal("the downloaded file is not the object")
	}
	if res.Parts != 4 || hc.ranges.Load() != 4 || res.Transferred != int64(len(data)) {
		t.Errorf("download: %+v, %d ranged GETs", res, hc.ranges.Load())
	}
	if exists(dst+transfer.PartialSuffix) || exists(dst+transfer.PartialSuffix+".json") {
		t.Error("partial download files left behind")
	}
}

func resumeUpload(t *testing.T, c objclient.Client, bucket string, partSize int64) {
	const parts = 7
	data := randomBytes(int((parts-1)*partSize+1000), 3)
	src := writeFile(t, "resume.bin", data)
	stateDir := t.TempDir()
	hc := &hookedClient{Client: c}
	opts := transfer.UploadOptions{Options: transfer.Options{PartSize: partSize, Threshold: partSize, Concurrency: 2}, StateDir: stateDir}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hc.interruptAfter(3, cancel)
	_, err := transfer.Upload(ctx, hc, src, bucket, "resumed", opts)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted; run the same command again to resume") {
		t.Fatalf("interrupted upload: %v", err)
	}
	first := hc.parts.Load()
	if files := stateFiles(t, stateDir); len(files) != 1 {
		t.Fatalf("state files after the interruption: %v", files)
	}
	if _, err := c.Head(context.Background(), bucket, "resumed"); !objclient.IsNotFound(err) {
		t.Fatalf("head of an interrupted upload: %v, want a 404", err)
	}

	hc.reset()
	res, err := transfer.Upload(context.Background(), hc, src, bucket, "resumed", opts)
	if err != nil {
		t.Fatal(err)
	}
	second := hc.parts.Load()
	if second > parts-first || second == parts {
		t.Errorf("%d parts done before the interruption, %d uploaded again of %d", first, second, parts)
	}
	if res.Resumed < first*partSize || res.Resumed+res.Transferred != int64(len(data)) {
		t.Errorf("result %+v after %d resumed parts", res, first)
	}
	if files := stateFiles(t, stateDir); len(files) != 0 {
		t.Errorf("state files left: %v", files)
	}
	if got := objectBytes(t, c, bucket, "resumed"); !bytes.Equal(got, data) {
		t.Fatal("the resumed object is not the file")
	}

	// A file changed since an interruption is another upload: nothing of the old one is used.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	hc.reset()
	hc.interruptAfter(3, cancel)
	if _, err := transfer.Upload(ctx, hc, src, bucket, "resumed", opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted upload: %v", err)
	}
	data[0] ^= 0xff
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	hc.reset()
	if _, err := transfer.Upload(context.Background(), hc, src, bucket, "resumed", opts); err != nil || hc.parts.Load() != parts {
		t.Errorf("upload of the changed file: %v, %d of %d parts sent", err, hc.parts.Load(), parts)
	}
	if got := objectBytes(t, c, bucket, "resumed"); !bytes.Equal(got, data) {
		t.Fatal("the object is not the changed file")
	}
}

func resumeDownload(t *testing.T, c objclient.Client, bucket string, partSize int64) {
	const ranges = 7
	data := randomBytes(int((ranges-1)*partSize+1000), 4)
	if _, err := transfer.Upload(context.Background(), c, writeFile(t, "src", data), bucket, "to-download",
		transfer.UploadOptions{StateDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	hc := &hookedClient{Client: c}
	opts := transfer.DownloadOptions{Options: transfer.Options{PartSize: partSize, Threshold: partSize, Concurrency: 2}}
	dst := filepath.Join(t.TempDir(), "out.bin")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hc.interruptAfter(3, cancel)
	_, err := transfer.Download(ctx, hc, bucket, "to-download", dst, opts)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted; run the same command again to resume") {
		t.Fatalf("interrupted download: %v", err)
	}
	first := hc.ranges.Load()
	if exists(dst) || !exists(dst+transfer.PartialSuffix) || !exists(dst+transfer.PartialSuffix+".json") {
		t.Fatal("after the interruption: want the partial file and its state, and no destination")
	}

	hc.reset()
	res, err := transfer.Download(context.Background(), hc, bucket, "to-download", dst, opts)
	if err != nil {
		t.Fatal(err)
	}
	second := hc.ranges.Load()
	if second > ranges-first || second == ranges {
		t.Errorf("%d ranges done before the interruption, %d fetched again of %d", first, second, ranges)
	}
	if res.Resumed < first*partSize || res.Resumed+res.Transferred != int64(len(data)) {
		t.Errorf("result %+v after %d resumed ranges", res, first)
	}
	if !bytes.Equal(fileBytes(t, dst), data) {
		t.Fatal("the resumed download is not the object")
	}
	if exists(dst+transfer.PartialSuffix) || exists(dst+transfer.PartialSuffix+".json") {
		t.Error("partial download files left behind")
	}
}

// changedObject: an object replaced between two attempts (same size, other bytes) is
// downloaded afresh, not stitched together from both versions.
func changedObject(t *testing.T, c objclient.Client, bucket string, partSize int64) {
	const ranges = 4
	v1 := randomBytes(int(ranges*partSize), 5)
	v2 := randomBytes(int(ranges*partSize), 6)
	put := func(data []byte) {
		if _, err := transfer.Upload(context.Background(), c, writeFile(t, "v", data), bucket, "changing",
			transfer.UploadOptions{Options: transfer.Options{PartSize: partSize, Threshold: partSize}, StateDir: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
	}
	put(v1)
	hc := &hookedClient{Client: c}
	opts := transfer.DownloadOptions{Options: transfer.Options{PartSize: partSize, Threshold: partSize, Concurrency: 1}}
	dst := filepath.Join(t.TempDir(), "changing.bin")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hc.interruptAfter(2, cancel)
	if _, err := transfer.Download(ctx, hc, bucket, "changing", dst, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted download: %v", err)
	}
	put(v2)
	hc.reset()
	res, err := transfer.Download(context.Background(), hc, bucket, "changing", dst, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fileBytes(t, dst), v2) {
		t.Fatal("the download is not the new version")
	}
	if hc.ranges.Load() != ranges || res.Resumed != 0 {
		t.Errorf("%d ranges fetched, result %+v: want all %d, none resumed", hc.ranges.Load(), res, ranges)
	}
}

// hostileKeyNames break clients that escape too little or too much.
var hostileKeyNames = []string{
	"with space",
	"plus+sign",
	"per%25cent%",
	"ütf-8 ✓ ключ",
	"question?mark",
	"hash#tag",
	"a/b//c/",
	"sub-delims!$&'()*,;=:@~",
}

func hostileKeys(t *testing.T, c objclient.Client, bucket string, partSize int64) {
	ctx := context.Background()
	small := randomBytes(1000, 7)
	large := randomBytes(int(partSize+100), 8)
	smallFile, largeFile := writeFile(t, "small", small), writeFile(t, "large", large)
	opts := transfer.Options{PartSize: partSize, Threshold: partSize}
	for i, name := range hostileKeyNames {
		key := "hostile/" + name
		src, want := smallFile, small
		if i < 2 { // two through multipart uploads and ranges; a part is big
			src, want = largeFile, large
		}
		if _, err := transfer.Upload(ctx, c, src, bucket, key, transfer.UploadOptions{Options: opts, StateDir: t.TempDir()}); err != nil {
			t.Fatalf("upload %q: %v", key, err)
		}
		dst := filepath.Join(t.TempDir(), "out")
		if _, err := transfer.Download(ctx, c, bucket, key, dst, transfer.DownloadOptions{Options: opts}); err != nil {
			t.Fatalf("download %q: %v", key, err)
		}
		if !bytes.Equal(fileBytes(t, dst), want) {
			t.Errorf("%q: downloaded bytes differ", key)
		}
	}
	var got []string
	if err := transfer.List(ctx, c, bucket, "hostile/", true, func(e transfer.Entry) error {
		got = append(got, strings.TrimPrefix(e.Name(), "hostile/"))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(slices.Values(hostileKeyNames))
	if !slices.Equal(got, want) {
		t.Errorf("listing:\n got %q\nwant %q", got, want)
	}
	n, err := transfer.Remove(ctx, c, bucket, "hostile/", transfer.RemoveOptions{Recursive: true})
	if err != nil || n != int64(len(hostileKeyNames)) {
		t.Errorf("remove: %d, %v", n, err)
	}
}

func listRemove(t *testing.T, c objclient.Client, bucket string) {
	ctx := context.Background()
	src := writeFile(t, "f", []byte("x"))
	keys := []string{"lr/dir/a", "lr/dir/b/c", "lr/dir/b/d", "lr/dirt", "lr/dir", "lr/top"}
	for _, k := range keys {
		if _, err := transfer.Upload(ctx, c, src, bucket, k, transfer.UploadOptions{StateDir: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
	}
	list := func(prefix string, recursive bool) []string {
		var names []string
		if err := transfer.List(ctx, c, bucket, prefix, recursive, func(e transfer.Entry) error {
			if e.Prefix == "" && e.Object.Size != 1 {
				t.Errorf("entry %+v", e)
			}
			names = append(names, e.Name())
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return names
	}
	if got, want := list("lr/", false), []string{"lr/dir", "lr/dir/", "lr/dirt", "lr/top"}; !slices.Equal(got, want) {
		t.Errorf("listing by directory: %q, want %q", got, want)
	}
	if got, want := list("lr/dir/", true), []string{"lr/dir/a", "lr/dir/b/c", "lr/dir/b/d"}; !slices.Equal(got, want) {
		t.Errorf("recursive listing: %q, want %q", got, want)
	}

	var nf *transfer.NotFoundError
	if _, err := transfer.Remove(ctx, c, bucket, "lr/nope", transfer.RemoveOptions{}); !errors.As(err, &nf) {
		t.Errorf("remove of a missing object: %v", err)
	}
	var removed []string
	n, err := transfer.Remove(ctx, c, bucket, "lr/dir", transfer.RemoveOptions{Recursive: true,
		Removed: func(k string) { removed = append(removed, k) }})
	slices.Sort(removed)
	if err != nil || n != 4 || !slices.Equal(removed, []string{"lr/dir", "lr/dir/a", "lr/dir/b/c", "lr/dir/b/d"}) {
		t.Errorf("recursive remove of lr/dir: %d, %v, removed %q", n, err, removed)
	}
	if n, err := transfer.Remove(ctx, c, bucket, "lr/top", transfer.RemoveOptions{}); err != nil || n != 1 {
		t.Errorf("remove lr/top: %d, %v", n, err)
	}
	if got, want := list("lr/", true), []string{"lr/dirt"}; !slices.Equal(got, want) {
		t.Errorf("left after removing: %q, want %q", got, want)
	}
	if err := transfer.List(ctx, c, "no-such-bucket-here", "", false, func(transfer.Entry) error { return nil }); !errors.As(err, &nf) {
		t.Errorf("listing a missing bucket: %v", err)
	}
}

// TestClientThrottle: 3 MiB at 1 MiB/s take at least 2 s, up and down, however many streams
// share the limit. Only a lower bound: a slow machine can only make it slower.
func TestClientThrottle(t *testing.T) {
	c := startCairn(t)
	bucket := newBucket(t, c)
	ctx := context.Background()
	data := randomBytes(3*MiB, 9)
	start := time.Now()
	if _, err := transfer.Upload(ctx, c, writeFile(t, "slow", data), bucket, "slow",
		transfer.UploadOptions{Options: transfer.Options{RateLimit: 1 * MiB}, StateDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 2*time.Second {
		t.Errorf("3 MiB up at 1 MiB/s took %v", d)
	}
	start = time.Now()
	dst := filepath.Join(t.TempDir(), "slow")
	res, err := transfer.Download(ctx, c, bucket, "slow", dst, transfer.DownloadOptions{Options: transfer.Options{
		RateLimit: 1 * MiB, PartSize: 256 << 10, Threshold: 256 << 10, Concurrency: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 2*time.Second || res.Parts != 12 {
		t.Errorf("3 MiB down in %d ranges at 1 MiB/s took %v", res.Parts, d)
	}
	if !bytes.Equal(fileBytes(t, dst), data) {
		t.Error("throttled download differs")
	}
}

// TestClientRetries: a failure a retry can cure (503, a stalled response) is retried; one it
// cannot (403) is not, and the upload stays resumable.
func TestClientRetries(t *testing.T) {
	c := startCairn(t)
	bucket := newBucket(t, c)
	ctx := context.Background()
	partSize := int64(transfer.MinS3PartSize)
	data := randomBytes(int(2*partSize), 10)
	src := writeFile(t, "retried", data)
	stateDir := t.TempDir()
	opts := transfer.UploadOptions{Options: transfer.Options{PartSize: partSize, Threshold: partSize, Concurrency: 1}, StateDir: stateDir}

	hc := &hookedClient{Client: c, failPart: func(n int64) error {
		if n == 1 {
			return &objclient.Error{Op: "upload-part", Status: 403, Code: "AccessDenied"}
		}
		return nil
	}}
	_, err := transfer.Upload(ctx, hc, src, bucket, "retried", opts)
	if err == nil || !strings.Contains(err.Error(), "AccessDenied") || hc.partCalls.Load() != 1 {
		t.Fatalf("upload with a 403: %v after %d calls", err, hc.partCalls.Load())
	}
	if len(stateFiles(t, stateDir)) != 1 {
		t.Fatal("no state file kept after a failed upload")
	}

	hc = &hookedClient{Client: c, failPart: func(n int64) error {
		if n == 1 {
			return &objclient.Error{Op: "upload-part", Status: 503, Code: "SlowDown"}
		}
		return nil
	}}
	if _, err := transfer.Upload(ctx, hc, src, bucket, "retried", opts); err != nil || hc.partCalls.Load() != 3 {
		t.Fatalf("upload with a 503: %v after %d calls", err, hc.partCalls.Load())
	}
	if !bytes.Equal(objectBytes(t, c, bucket, "retried"), data) {
		t.Fatal("retried upload differs")
	}

	// The second ranged GET hangs and must be abandoned and sent again. A healthy one that a
	// busy machine keeps without a byte for StallTimeout is abandoned and sent again too, as it
	// should be, so the count of GETs is at least 3 (not exactly): what must be exact is that
	// each of the two ranges arrived once, and its bytes were counted once.
	hc = &hookedClient{Client: c, stallGet: func(n int64) bool { return n == 2 }}
	dst := filepath.Join(t.TempDir(), "retried")
	res, err := transfer.Download(ctx, hc, bucket, "retried", dst, transfer.DownloadOptions{Options: transfer.Options{
		PartSize: partSize, Threshold: partSize, Concurrency: 1, StallTimeout: time.Second}})
	if err != nil || hc.getCalls.Load() < 3 || hc.ranges.Load() != 2 || res.Transferred != int64(len(data)) {
		t.Fatalf("download with a stalled range: %v after %d ranged GETs (%d answered), %+v", err, hc.getCalls.Load(), hc.ranges.Load(), res)
	}
	if !bytes.Equal(fileBytes(t, dst), data) {
		t.Fatal("download after a stall differs")
	}
}
