package engine

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/vfs"
)

// env is an engine over a Pebble DB in dir on fs.
type env struct {
	t   testing.TB
	fs  vfs.FS
	dir string
	db  *pebble.DB
	e   *Engine
	// reserve is Config.ReserveBytes; tests default to -1 (off) so that a nearly full disk of
	// the test machine does not fail them.
	reserve int64
}

func openDB(t testing.TB, fs vfs.FS, dir string) *pebble.DB {
	t.Helper()
	o := &pebble.Options{FS: fs, Logger: quietLogger{}}
	TunePebble(o)
	db, err := pebble.Open(fs.PathJoin(dir, "db"), o)
	if err != nil {
		t.Fatalf("pebble.Open: %v", err)
	}
	return db
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(f string, a ...any) {
	panic(fmt.Sprintf(f, a...))
}

func newEnv(t testing.TB, fs vfs.FS, dir string) *env {
	t.Helper()
	if fs == nil {
		fs = vfs.Default
	}
	if dir == "" {
		dir = t.TempDir()
	}
	v := &env{t: t, fs: fs, dir: dir, reserve: -1}
	v.open()
	t.Cleanup(v.close)
	return v
}

func (v *env) open() {
	v.t.Helper()
	v.db = openDB(v.t, v.fs, v.dir)
	e, err := Open(Config{Dir: v.dir, FS: v.fs, DB: v.db, ReserveBytes: v.reserve})
	if err != nil {
		v.t.Fatalf("Open: %v", err)
	}
	v.e = e
}

func (v *env) close() {
	if v.e != nil {
		v.e.Close()
		v.e = nil
	}
	if v.db != nil {
		v.db.Close()
		v.db = nil
	}
}

func (v *env) reopen() { v.close(); v.open() }

var ctx = context.Background()

func name(o string) meta.ObjectName {
	return meta.ObjectName{Account: "acct", Container: "cont", Object: o}
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func md5hex(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

func (v *env) put(n meta.ObjectName, ts meta.Timestamp, data []byte) (meta.Object, error) {
	return v.e.Put(ctx, n, meta.Object{Timestamp: ts, Size: int64(len(data)), ContentType: "application/x-test"}, bytes.NewReader(data), PutOptions{})
}

func (v *env) mustPut(n meta.ObjectName, data []byte) meta.Object {
	v.t.Helper()
	o, err := v.put(n, meta.Now(), data)
	if err != nil {
		v.t.Fatalf("put %q (%d bytes): %v", n.Object, len(data), err)
	}
	return o
}

func (v *env) read(n meta.ObjectName, rng *meta.Range) ([]byte, *Reader, error) {
	r, err := v.e.Get(ctx, n, rng)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	return b, r, err
}

func (v *env) mustRead(n meta.ObjectName) []byte {
	v.t.Helper()
	b, _, err := v.read(n, nil)
	if err != nil {
		v.t.Fatalf("get %q: %v", n.Object, err)
	}
	return b
}

// dataFiles lists the data files below dir/objects.
func dataFiles(t testing.TB, fs vfs.FS, dir string) []string {
	t.Helper()
	var out []string
	for i := range 256 {
		sub := fs.PathJoin(dir, objectsDir, fmt.Sprintf("%02x", i))
		names, err := fs.List(sub)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			out = append(out, fs.PathJoin(sub, n))
		}
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	v := newEnv(t, nil, "")
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 4096, DefaultInlineThreshold - 1, DefaultInlineThreshold, DefaultInlineThreshold + 1, BlockSize * 3, BlockSize*3 + 17, 1 << 20} {
		for _, known := range []bool{true, false} {
			t.Run(fmt.Sprintf("%d/known=%v", size, known), func(t *testing.T) {
				data := randBytes(r, size)
				n := name(fmt.Sprintf("obj-%d-%v", size, known))
				obj := meta.Object{
					Timestamp: meta.Now(), Size: -1, ContentType: "text/plain",
					Headers:  map[string]string{"Content-Encoding": "gzip"},
					UserMeta: map[string]string{"color": "blue"},
					SysMeta:  map[string]string{"checksum-crc32": "abc"},
				}
				if known {
					obj.Size = int64(size)
				}
				// iotest-like reader returning tiny chunks exercises the buffering paths.
				got, err := v.e.Put(ctx, n, obj, &chunky{r: bytes.NewReader(data), max: 1000}, PutOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got.Size != int64(size) || got.ETag != md5hex(data) {
					t.Fatalf("put returned size %d etag %s", got.Size, got.ETag)
				}
				b, rd, err := v.read(n, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(b, data) {
					t.Fatalf("read back %d bytes, differ", len(b))
				}
				if rd.Object.ETag != md5hex(data) || rd.Object.UserMeta["color"] != "blue" ||
					rd.Object.Headers["Content-Encoding"] != "gzip" || rd.Object.ContentType != "text/plain" ||
					rd.Object.Timestamp != obj.Timestamp || rd.Length != int64(size) {
					t.Fatalf("metadata %+v", rd.Object)
				}
			})
		}
	}
	// Only the objects above the threshold have files.
	want := 2 * 4 // sizes DefaultInlineThreshold+1 and up, each with known and unknown size
	if got := len(dataFiles(t, v.fs, v.dir)); got != want {
		t.Fatalf("%d data files, want %d", got, want)
	}
}

// chunky returns at most max bytes per Read.
type chunky struct {
	r   io.Reader
	max int
}

func (c *chunky) Read(p []byte) (int, error) {
	if len(p) > c.max {
		p = p[:c.max]
	}
	return c.r.Read(p)
}

func TestRanges(t *testing.T) {
	v := newEnv(t, nil, "")
	r := rand.New(rand.NewPCG(3, 4))
	for _, size := range []int{1000, 3*BlockSize + 100} {
		data := randBytes(r, size)
		n := name(fmt.Sprintf("r%d", size))
		v.mustPut(n, data)
		s := int64(size)
		for _, tc := range []struct {
			rng      meta.Range
			off, len int64
			err      error
		}{
			{meta.Range{Start: 0, End: 0}, 0, 1, nil},
			{meta.Range{Start: 10, End: -1}, 10, s - 10, nil},
			{meta.Range{Start: 5, End: 99}, 5, 95, nil},
			{meta.Range{Suffix: 300}, s - 300, 300, nil},
			{meta.Range{Start: BlockSize - 2, End: BlockSize + 1}, BlockSize - 2, 4, nil},
			{meta.Range{Start: s - 1, End: s + 100}, s - 1, 1, nil},
			{meta.Range{Start: s, End: -1}, 0, 0, meta.ErrInvalidRange},
		} {
			if tc.off+tc.len > s || tc.off < 0 {
				continue
			}
			b, rd, err := v.read(n, &tc.rng)
			if !errors.Is(err, tc.err) {
				t.Fatalf("size %d range %+v: err %v, want %v", size, tc.rng, err, tc.err)
			}
			if err != nil {
				continue
			}
			if rd.Offset != tc.off || rd.Length != tc.len || !bytes.Equal(b, data[tc.off:tc.off+tc.len]) {
				t.Fatalf("size %d range %+v: got off %d len %d (%d bytes)", size, tc.rng, rd.Offset, rd.Length, len(b))
			}
		}
	}
}

func TestOverwriteDeleteConflict(t *testing.T) {
	for _, sizes := range [][2]int{{10, 20}, {10, 200 << 10}, {200 << 10, 10}, {200 << 10, 300 << 10}} {
		t.Run(fmt.Sprint(sizes), func(t *testing.T) {
			v := newEnv(t, nil, "")
			r := rand.New(rand.NewPCG(5, 6))
			n := name("x")
			a, b := randBytes(r, sizes[0]), randBytes(r, sizes[1])
			t1 := meta.Now()
			if _, err := v.put(n, t1, a); err != nil {
				t.Fatal(err)
			}
			t2 := meta.Now()
			if _, err := v.put(n, t2, b); err != nil {
				t.Fatal(err)
			}
			if got := v.mustRead(n); !bytes.Equal(got, b) {
				t.Fatal("overwrite not visible")
			}
			// Old and equal timestamps conflict, for puts and deletes, and change nothing.
			for _, ts := range []meta.Timestamp{t1, t2} {
				if _, err := v.put(n, ts, a); !errors.Is(err, meta.ErrConflict) {
					t.Fatalf("put at old ts: %v", err)
				}
				if err := v.e.Delete(ctx, n, ts, DeleteOptions{}); !errors.Is(err, meta.ErrConflict) {
					t.Fatalf("delete at old ts: %v", err)
				}
			}
			if got := v.mustRead(n); !bytes.Equal(got, b) {
				t.Fatal("conflict changed data")
			}
			if want := boolInt(sizes[1] > DefaultInlineThreshold); len(dataFiles(t, v.fs, v.dir)) != want {
				t.Fatalf("old data file not removed: %v", dataFiles(t, v.fs, v.dir))
			}
			t3 := meta.Now()
			var prev *meta.Object
			if err := v.e.Delete(ctx, n, t3, DeleteOptions{InBatch: func(_ *pebble.Batch, p *meta.Object) error { prev = p; return nil }}); err != nil {
				t.Fatal(err)
			}
			if prev == nil || prev.Timestamp != t2 {
				t.Fatalf("InBatch prev %+v", prev)
			}
			if _, _, err := v.read(n, nil); !errors.Is(err, meta.ErrNotFound) {
				t.Fatalf("get after delete: %v", err)
			}
			st, err := v.e.Stat(ctx, n)
			if err != nil || !st.Deleted || st.Timestamp != t3 {
				t.Fatalf("stat tombstone: %+v %v", st, err)
			}
			if len(dataFiles(t, v.fs, v.dir)) != 0 {
				t.Fatal("data file survived delete")
			}
			if err := v.e.Delete(ctx, n, meta.Now(), DeleteOptions{}); !errors.Is(err, meta.ErrNotFound) {
				t.Fatalf("delete of tombstone: %v", err)
			}
			if _, err := v.e.Stat(ctx, name("never")); !errors.Is(err, meta.ErrNotFound) {
				t.Fatalf("stat of missing: %v", err)
			}
			// A delete of a name never written answers not found, and still records its
			// tombstone (Swift's .ts for a 404): an older PUT arriving later is refused.
			tNever := meta.Now()
			var prevNever = &meta.Object{}
			if err := v.e.Delete(ctx, name("never"), tNever, DeleteOptions{InBatch: func(_ *pebble.Batch, p *meta.Object) error { prevNever = p; return nil }}); !errors.Is(err, meta.ErrNotFound) {
				t.Fatalf("delete of missing: %v", err)
			}
			if prevNever != nil {
				t.Fatalf("InBatch of a delete of a missing name saw %+v", prevNever)
			}
			if st, err := v.e.Stat(ctx, name("never")); err != nil || !st.Deleted || st.Timestamp != tNever {
				t.Fatalf("stat after a delete of a missing name: %+v, %v", st, err)
			}
			if _, err := v.put(name("never"), tNever-1, a); !errors.Is(err, meta.ErrConflict) {
				t.Fatalf("put older than the tombstone of a missing name: %v", err)
			}
			if _, _, err := v.read(name("never"), nil); !errors.Is(err, meta.ErrNotFound) {
				t.Fatalf("get after a refused older put: %v", err)
			}
			// A put after the tombstone resurrects; one older than it conflicts.
			if _, err := v.put(n, t3, a); !errors.Is(err, meta.ErrConflict) {
				t.Fatalf("put at tombstone ts: %v", err)
			}
			v.mustPut(n, a)
			if !bytes.Equal(v.mustRead(n), a) {
				t.Fatal("resurrected data differs")
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestLengthMismatch(t *testing.T) {
	for _, tc := range []struct {
		declared, actual int
		want             error
	}{
		{10, 9, meta.ErrIncompleteBody},
		{10, 11, meta.ErrBodyTooLong},
		{DefaultInlineThreshold, DefaultInlineThreshold + 1, meta.ErrBodyTooLong},
		{DefaultInlineThreshold + 1, DefaultInlineThreshold, meta.ErrIncompleteBody},
		{1 << 20, 1<<20 - 1, meta.ErrIncompleteBody},
		{1 << 20, 1<<20 + 1, meta.ErrBodyTooLong},
		{0, 1, meta.ErrBodyTooLong},
	} {
		t.Run(fmt.Sprintf("%d-%d", tc.declared, tc.actual), func(t *testing.T) {
			v := newEnv(t, nil, "")
			n := name("m")
			old := v.mustPut(n, []byte("old"))
			data := bytes.Repeat([]byte("z"), tc.actual)
			_, err := v.e.Put(ctx, n, meta.Object{Timestamp: meta.Now(), Size: int64(tc.declared)}, bytes.NewReader(data), PutOptions{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			st, err := v.e.Stat(ctx, n)
			if err != nil || st.Timestamp != old.Timestamp || string(v.mustRead(n)) != "old" {
				t.Fatalf("old version disturbed: %+v %v", st, err)
			}
			assertNoLeftovers(t, v)
		})
	}
}

func assertNoLeftovers(t *testing.T, v *env) {
	t.Helper()
	if f := dataFiles(t, v.fs, v.dir); len(f) != 0 {
		t.Fatalf("data files left: %v", f)
	}
	tmps, _ := v.fs.List(v.fs.PathJoin(v.dir, objectsDir, tmpDir))
	if len(tmps) != 0 {
		t.Fatalf("temp files left: %v", tmps)
	}
}

// failingReader returns its bytes, then err instead of io.EOF (a client disconnect, or a
// verifying reader whose checksum did not match).
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

func TestAbortedBody(t *testing.T) {
	boom := errors.New("client went away")
	for _, size := range []int{100, 1 << 20} {
		for _, known := range []bool{true, false} {
			t.Run(fmt.Sprintf("%d/%v", size, known), func(t *testing.T) {
				v := newEnv(t, nil, "")
				n := name("a")
				old := bytes.Repeat([]byte("o"), 70<<10) // a file version
				v.mustPut(n, old)
				decl := int64(-1)
				if known {
					decl = int64(size)
				}
				body := &failingReader{r: bytes.NewReader(make([]byte, size)), err: boom}
				_, err := v.e.Put(ctx, n, meta.Object{Timestamp: meta.Now(), Size: decl}, body, PutOptions{})
				if !errors.Is(err, boom) {
					t.Fatalf("err %v", err)
				}
				if !bytes.Equal(v.mustRead(n), old) {
					t.Fatal("old version lost")
				}
				if f := dataFiles(t, v.fs, v.dir); len(f) != 1 {
					t.Fatalf("data files: %v", f)
				}
				// BeforeCommit can veto as well.
				_, err = v.e.Put(ctx, n, meta.Object{Timestamp: meta.Now(), Size: int64(size)}, bytes.NewReader(make([]byte, size)),
					PutOptions{BeforeCommit: func(*meta.Object) error { return boom }})
				if !errors.Is(err, boom) || !bytes.Equal(v.mustRead(n), old) || len(dataFiles(t, v.fs, v.dir)) != 1 {
					t.Fatalf("BeforeCommit veto: %v", err)
				}
			})
		}
	}
}

func TestConcurrentPutsSameName(t *testing.T) {
	v := newEnv(t, nil, "")
	n := name("hot")
	var wg sync.WaitGroup
	type result struct {
		ts   meta.Timestamp
		data []byte
	}
	results := make(chan result, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for range 8 {
				size := 10 + r.IntN(150<<10) // inline and file
				data := randBytes(r, size)
				ts := meta.Now()
				if _, err := v.put(n, ts, data); err == nil {
					results <- result{ts, data}
				} else if !errors.Is(err, meta.ErrConflict) {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	close(results)
	var newest result
	for r := range results {
		if r.ts > newest.ts {
			newest = r
		}
	}
	st, err := v.e.Stat(ctx, n)
	if err != nil || st.Timestamp != newest.ts {
		t.Fatalf("stat %v %v, newest acknowledged %d", st.Timestamp, err, newest.ts)
	}
	if !bytes.Equal(v.mustRead(n), newest.data) {
		t.Fatal("data is not the newest acknowledged version")
	}
	if f := dataFiles(t, v.fs, v.dir); len(f) > 1 {
		t.Fatalf("superseded data files left: %v", f)
	}
}

func TestInBatchAndUpdateMeta(t *testing.T) {
	v := newEnv(t, nil, "")
	n := name("m")
	put := func(ts meta.Timestamp, fail bool) error {
		_, err := v.e.Put(ctx, n, meta.Object{Timestamp: ts, Size: 3}, strings.NewReader("abc"), PutOptions{
			InBatch: func(b *pebble.Batch, o, _ *meta.Object) error {
				if fail {
					return errors.New("no")
				}
				return b.Set([]byte("zlisting"), []byte(o.ETag), nil)
			},
		})
		return err
	}
	if err := put(meta.Now(), true); err == nil {
		t.Fatal("InBatch error ignored")
	}
	if _, err := v.e.Stat(ctx, n); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("failed put visible: %v", err)
	}
	if err := put(meta.Now(), false); err != nil {
		t.Fatal(err)
	}
	val, closer, err := v.db.Get([]byte("zlisting"))
	if err != nil || string(val) != md5hex([]byte("abc")) {
		t.Fatalf("InBatch write missing: %q %v", val, err)
	}
	closer.Close()
	ts := meta.Now()
	o, err := v.e.UpdateMeta(ctx, n, ts, func(o *meta.Object) error {
		o.UserMeta = map[string]string{"k": "v"}
		o.Size = 999 // must be ignored
		return nil
	}, PutOptions{})
	if err != nil || o.Timestamp != ts || o.UserMeta["k"] != "v" || o.Size != 3 {
		t.Fatalf("UpdateMeta: %+v %v", o, err)
	}
	if string(v.mustRead(n)) != "abc" {
		t.Fatal("bytes changed")
	}
	if _, err := v.e.UpdateMeta(ctx, n, ts, func(*meta.Object) error { return nil }, PutOptions{}); !errors.Is(err, meta.ErrConflict) {
		t.Fatalf("UpdateMeta at same ts: %v", err)
	}
	if _, err := v.e.UpdateMeta(ctx, name("none"), meta.Now(), func(*meta.Object) error { return nil }, PutOptions{}); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("UpdateMeta of missing: %v", err)
	}
}

func TestManifest(t *testing.T) {
	v := newEnv(t, nil, "")
	n := name("big")
	segs := []meta.Segment{{Container: "\x00segs", Object: "big/1", Size: 5 << 20, ETag: "aa"}, {Container: "\x00segs", Object: "big/2", Size: 7, ETag: "bb"}}
	obj := meta.Object{Timestamp: meta.Now(), Size: 5<<20 + 7, ETag: "cafe-2", Manifest: segs}
	if _, err := v.e.Put(ctx, n, obj, nil, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	_, rd, err := v.read(n, &meta.Range{Start: 100, End: 200})
	if err != nil {
		t.Fatal(err)
	}
	if rd.Object.Size != obj.Size || rd.Object.ETag != "cafe-2" || len(rd.Object.Manifest) != 2 || !reflect.DeepEqual(rd.Object.Manifest[1], segs[1]) || rd.Length != 0 {
		t.Fatalf("manifest read back as %+v (len %d)", rd.Object, rd.Length)
	}
}

func TestNamesWithAnyBytes(t *testing.T) {
	v := newEnv(t, nil, "")
	names := []meta.ObjectName{
		{Account: "a", Container: "b\x00c", Object: "d"},
		{Account: "a", Container: "b", Object: "\x00c\x00d"},
		{Account: "a\x00b", Container: "c", Object: "d"},
		{Account: "a", Container: "\x00reserved", Object: "\xff\xfe"},
	}
	for i, n := range names {
		if _, err := v.e.Put(ctx, n, meta.Object{Timestamp: meta.Now(), Size: 1}, bytes.NewReader([]byte{byte(i)}), PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range names {
		r, err := v.e.Get(ctx, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r)
		r.Close()
		if !bytes.Equal(b, []byte{byte(i)}) {
			t.Fatalf("%q: got %v", n, b)
		}
		k := objectKey(nil, n)
		back, err := parseKey(k)
		if err != nil || back != n {
			t.Fatalf("parseKey(%q) = %q %v", k, back, err)
		}
	}
}

func TestRecordEncoding(t *testing.T) {
	recs := []*record{
		{obj: meta.Object{Timestamp: 1, Deleted: true}},
		{obj: meta.Object{Timestamp: 1<<62 + 5, Size: 3, ETag: "e", ContentType: "c", UserMeta: map[string]string{"a": "b", "": ""}}, dataLen: 3, dataCRC: 7, inline: []byte("abc")},
		{obj: meta.Object{Timestamp: 9, Size: 1 << 40, Manifest: []meta.Segment{}}, isFile: true, file: "ab/cd", block: BlockSize, dataLen: BlockSize + 1, blocks: []uint32{1, 2}},
	}
	for _, r := range recs {
		enc := r.encode(nil)
		got, err := decodeRecord(enc)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(r) || (r.obj.Manifest != nil) != (got.obj.Manifest != nil) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, r)
		}
		// Every single-bit flip and every truncation is detected.
		for i := range enc {
			bad := bytes.Clone(enc)
			bad[i] ^= 1
			if _, err := decodeRecord(bad); !errors.Is(err, meta.ErrCorrupt) {
				t.Fatalf("flip at %d: %v", i, err)
			}
			if _, err := decodeRecord(enc[:i]); !errors.Is(err, meta.ErrCorrupt) {
				t.Fatalf("truncation at %d: %v", i, err)
			}
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add((&record{obj: meta.Object{Timestamp: 3, UserMeta: map[string]string{"x": "y"}}, inline: []byte("hi"), dataLen: 2}).encode(nil))
	f.Add((&record{obj: meta.Object{Timestamp: 4, Manifest: []meta.Segment{{Container: "c", Object: "o", Size: 9, ETag: "e", Ranged: true, Offset: 1, Length: 2},
		{Data: []byte("d")}, {Container: "c", Object: "m", SubManifest: true, ContentType: "t", Timestamp: 3}}}}).encode(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Any input either decodes or fails with ErrCorrupt; it never panics. Inputs with a
		// valid CRC reach the field decoders.
		if len(b) >= 4 {
			b = (&rawCRC{b}).fix()
		}
		if _, err := decodeRecord(b); err != nil && !errors.Is(err, meta.ErrCorrupt) {
			t.Fatal(err)
		}
	})
}

type rawCRC struct{ b []byte }

// fix returns the bytes with a correct record CRC in front.
func (r *rawCRC) fix() []byte {
	b := bytes.Clone(r.b)
	binary.LittleEndian.PutUint32(b, crc32.Checksum(b[4:], castagnoli))
	return b
}

// A write carrying the timestamp of the current version (a retried or replicated write) is
// refused, and it must not have replaced the current version's data file on the way. Two
// mechanisms guard this: the early conflict check for large bodies, and data file names unique
// per write (which covers two such writes racing past the early check); the test fails only if
// both are gone.
func TestSameTimestampWriteLeavesTheCurrentFile(t *testing.T) {
	v := newEnv(t, vfs.Default, t.TempDir())
	r := rand.New(rand.NewPCG(5, 6))
	orig := randBytes(r, 300<<10)
	ts := meta.Now()
	if _, err := v.put(name("same"), ts, orig); err != nil {
		t.Fatal(err)
	}
	if _, err := v.put(name("same"), ts, randBytes(r, 300<<10)); !errors.Is(err, meta.ErrConflict) {
		t.Fatalf("second write at the same timestamp: %v, want ErrConflict", err)
	}
	if got := v.mustRead(name("same")); !bytes.Equal(got, orig) {
		t.Fatal("the refused write changed the stored bytes")
	}
	if files := dataFiles(t, vfs.Default, v.dir); len(files) != 1 {
		t.Fatalf("data files after the refused write: %v", files)
	}
}
