package engine

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/vfs"
)

// Faults: a full disk, failing syncs, flipped bytes, and the leftovers of a crash.

func TestENOSPC(t *testing.T) {
	dir := t.TempDir()
	ffs := vfs.NewFaulty(vfs.Default)
	v := newEnv(t, ffs, dir)
	r := rand.New(rand.NewPCG(7, 8))
	n := name("full")
	old := randBytes(r, 300<<10)
	v.mustPut(n, old)
	// The data file disk fills up half way through the next version.
	ffs.SetFilter(func(p string) bool { return strings.HasPrefix(p, filepath.Join(dir, objectsDir)) })
	ffs.SetWriteLimit(100 << 10)
	_, err := v.put(n, meta.Now(), randBytes(r, 300<<10))
	if !errors.Is(err, meta.ErrInsufficientStorage) {
		t.Fatalf("err %v, want ErrInsufficientStorage", err)
	}
	ffs.SetWriteLimit(0)
	if !bytes.Equal(v.mustRead(n), old) {
		t.Fatal("old version damaged")
	}
	if f := dataFiles(t, v.fs, v.dir); len(f) != 1 {
		t.Fatalf("data files: %v", f)
	}
	// A failing fsync of the data file is an error too, and leaves the old version.
	ffs.FailSyncs(1)
	if _, err := v.put(n, meta.Now(), randBytes(r, 300<<10)); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("sync failure: %v", err)
	}
	if !bytes.Equal(v.mustRead(n), old) {
		t.Fatal("old version damaged")
	}
	assertTmpEmpty(t, v)
	// After space frees up, writes work again.
	v.mustPut(n, []byte("fits"))
}

func assertTmpEmpty(t *testing.T, v *env) {
	t.Helper()
	tmps, _ := v.fs.List(v.fs.PathJoin(v.dir, objectsDir, tmpDir))
	if len(tmps) != 0 {
		t.Fatalf("temp files left: %v", tmps)
	}
}

// TestENOSPCInline fills the disk under Pebble. Pebble treats a failed WAL write as fatal, so
// the engine must refuse the PUT before it gets there: the free-space reserve does.
func TestENOSPCInline(t *testing.T) {
	dir := t.TempDir()
	ffs := vfs.NewFaulty(vfs.Default)
	v := newEnv(t, ffs, dir)
	v.reserve = 1 << 20
	v.reopen()
	n := name("small")
	v.mustPut(n, []byte("old"))
	ffs.SetWriteLimit(1)
	v.expireSpaceSample()
	_, err := v.put(n, meta.Now(), bytes.Repeat([]byte("n"), 1000))
	if !errors.Is(err, meta.ErrInsufficientStorage) {
		t.Fatalf("err %v, want ErrInsufficientStorage", err)
	}
	ffs.SetWriteLimit(0)
	if got := v.mustRead(n); string(got) != "old" {
		t.Fatalf("old version damaged: %q", got)
	}
}

func TestCorruption(t *testing.T) {
	v := newEnv(t, nil, "")
	r := rand.New(rand.NewPCG(9, 10))
	big := randBytes(r, 3*BlockSize+5)
	nb := name("big")
	v.mustPut(nb, big)
	files := dataFiles(t, v.fs, v.dir)
	if len(files) != 1 {
		t.Fatal(files)
	}
	// Flip one byte in the second block.
	flipFileByte(t, v.fs, files[0], BlockSize+10)
	// A range in the first block still reads (only touched blocks are verified).
	if b, _, err := v.read(nb, &meta.Range{Start: 0, End: 99}); err != nil || !bytes.Equal(b, big[:100]) {
		t.Fatalf("untouched block: %v", err)
	}
	_, _, err := v.read(nb, nil)
	if !errors.Is(err, meta.ErrCorrupt) {
		t.Fatalf("read of flipped block: %v", err)
	}
	q, _ := v.fs.List(v.fs.PathJoin(v.dir, quarantineDir))
	if !containsSuffix(q, dataSuffix) {
		t.Fatalf("not quarantined: %v", q)
	}
	// The version is kept, flagged: reads and HEADs answer ErrCorrupt, across a restart too.
	if _, err := v.e.Stat(ctx, nb); !errors.Is(err, meta.ErrCorrupt) {
		t.Fatalf("stat after quarantine: %v, want ErrCorrupt", err)
	}
	if st := v.e.Stats(); st.CorruptObjects != 1 || st.ChecksumFailures != 1 {
		t.Fatalf("stats %+v, want one corrupt object", st)
	}
	v.reopen()
	if _, _, err := v.read(nb, &meta.Range{Start: 0, End: 9}); !errors.Is(err, meta.ErrCorrupt) {
		t.Fatalf("read after restart: %v, want ErrCorrupt", err)
	}
	if st := v.e.Stats(); st.CorruptObjects != 1 {
		t.Fatalf("stats after restart %+v, want one corrupt object", st)
	}
	// The good copy can be restored with the same timestamp (replication).
	v.mustPut(nb, big)
	if !bytes.Equal(v.mustRead(nb), big) {
		t.Fatal("restored copy differs")
	}
	if st := v.e.Stats(); st.CorruptObjects != 0 {
		t.Fatalf("stats after repair %+v, want no corrupt object", st)
	}

	// Flip a byte of each kind of record: inline object, file object.
	for _, size := range []int{100, 100 << 10} {
		n := name(fmt.Sprintf("rec%d", size))
		v.mustPut(n, randBytes(r, size))
		key := objectKey(nil, n)
		val, closer, err := v.db.Get(key)
		if err != nil {
			t.Fatal(err)
		}
		bad := bytes.Clone(val)
		closer.Close()
		bad[len(bad)/2] ^= 0x40
		if err := v.db.Set(key, bad, pebble.Sync); err != nil {
			t.Fatal(err)
		}
		if _, _, err := v.read(n, nil); !errors.Is(err, meta.ErrCorrupt) {
			t.Fatalf("size %d: corrupt record read: %v", size, err)
		}
		if _, err := v.e.Stat(ctx, n); !errors.Is(err, meta.ErrCorrupt) {
			t.Fatalf("size %d: corrupt record stat: %v", size, err)
		}
		// It can be overwritten with a good version.
		v.mustPut(n, []byte("good"))
		if string(v.mustRead(n)) != "good" {
			t.Fatal("repair failed")
		}
	}
}

func containsSuffix(names []string, suffix string) bool {
	for _, n := range names {
		if strings.HasSuffix(n, suffix) {
			return true
		}
	}
	return false
}

func flipFileByte(t *testing.T, fs vfs.FS, path string, off int64) {
	t.Helper()
	f, err := fs.OpenReadWrite(path, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 1
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func TestOrphanGC(t *testing.T) {
	v := newEnv(t, nil, "")
	v.mustPut(name("keep"), bytes.Repeat([]byte("k"), 100<<10))
	kept := dataFiles(t, v.fs, v.dir)
	// Leftovers of a crash: a temp file, a renamed file whose record never committed, and an
	// old version's file whose removal never happened.
	write := func(p string) {
		f, err := v.fs.Create(p, "test")
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("junk"))
		f.Close()
	}
	write(v.fs.PathJoin(v.dir, objectsDir, tmpDir, "1-2.tmp"))
	orphan := v.fs.PathJoin(v.dir, objectsDir, dataFileName(objectKey(nil, name("lost")), meta.Now()))
	write(orphan)
	stale := v.fs.PathJoin(v.dir, objectsDir, dataFileName(objectKey(nil, name("keep")), 1))
	write(stale)
	v.reopen()
	got := dataFiles(t, v.fs, v.dir)
	if len(got) != 1 || got[0] != kept[0] {
		t.Fatalf("after GC: %v, want %v", got, kept)
	}
	// The two files without a record are kept in quarantine, not deleted, and counted.
	q, err := v.fs.List(v.fs.PathJoin(v.dir, quarantineDir, orphansDir))
	if err != nil || len(q) != 2 || v.e.Stats().OrphansQuarantined != 2 {
		t.Fatalf("quarantined orphans %v (%v), stats %+v; want 2", q, err, v.e.Stats())
	}
	assertTmpEmpty(t, v)
	if len(v.mustRead(name("keep"))) != 100<<10 {
		t.Fatal("kept object damaged")
	}
}

// No read returns a write that is not yet durable: Pebble makes a batch visible before its WAL
// sync returns, and a GET that answered with such a write would answer with a value a crash
// could still take back (the kill -9 robustness tier saw it happen). With the WAL's syncs held,
// a small PUT (inline, its record alone in the WAL) is visible to Pebble but not synced: a GET
// and a HEAD of its name wait for the sync; a GET of another name does not.
func TestNoReadOfAWriteNotYetSynced(t *testing.T) {
	dir := t.TempDir()
	ffs := vfs.NewFaulty(vfs.Default)
	v := newEnv(t, ffs, dir)
	n, other := name("durable"), name("other")
	v.mustPut(n, []byte("old"))
	v.mustPut(other, []byte("untouched"))
	ffs.SetFilter(func(p string) bool { return strings.HasSuffix(p, ".log") }) // Pebble's WAL
	held, release := ffs.HoldSyncs()
	defer release()
	put := make(chan error, 1)
	go func() {
		_, err := v.put(n, meta.Now(), []byte("new"))
		put <- err
	}()
	<-held // the PUT's batch is in the WAL, its sync waiting
	read := make(chan string, 1)
	go func() {
		b, _, err := v.read(n, nil)
		if err != nil {
			b = []byte(err.Error())
		}
		read <- string(b)
	}()
	if got := string(v.mustRead(other)); got != "untouched" {
		t.Errorf("another name read %q", got)
	}
	select {
	case got := <-read:
		t.Fatalf("a GET answered %q while the PUT's sync was held", got)
	case <-time.After(300 * time.Millisecond): // a GET that did not wait would have answered by now
	}
	release()
	if err := <-put; err != nil {
		t.Fatal(err)
	}
	if got := <-read; got != "new" {
		t.Errorf("the GET after the sync: %q", got)
	}
}
