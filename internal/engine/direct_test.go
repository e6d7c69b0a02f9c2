package engine

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"testing"

	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/vfs"
)

// countingDirect is the OS file system, counting the files the engine creates for direct I/O
// and how many of them still wrote directly when closed.
type countingDirect struct {
	vfs.FS
	created, direct atomic.Int64
}

func (c *countingDirect) CreateDirect(name string, cat pebblevfs.DiskWriteCategory) (vfs.File, error) {
	f, err := c.FS.(vfs.DirectCreator).CreateDirect(name, cat)
	if err != nil {
		return nil, err
	}
	c.created.Add(1)
	return &closeProbe{File: f, c: c}, nil
}

type closeProbe struct {
	vfs.File
	c *countingDirect
}

func (p *closeProbe) Close() error {
	if vfs.IsDirect(p.File) {
		p.c.direct.Add(1)
	}
	return p.File.Close()
}

// testDirectPuts writes objects of the sizes around the alignment and the write buffer through
// the direct-I/O path and reads them back byte for byte.
func testDirectPuts(t *testing.T, dir string) {
	fs := &countingDirect{FS: vfs.Default}
	v := newEnv(t, fs, dir)
	r := rand.New(rand.NewPCG(5, 6))
	files := int64(0)
	for _, size := range []int{0, 1, 4095, 4096, 4097, 1 << 20, 1<<20 + 1, 8<<20 + 123} {
		for _, known := range []bool{true, false} {
			// Reads of odd sizes leave the buffer partly filled between reads.
			for _, rd := range []int{1 << 20, 1000} {
				data := randBytes(r, size)
				n := name(fmt.Sprintf("obj-%d-%v-%d", size, known, rd))
				obj := meta.Object{Timestamp: meta.Now(), Size: -1}
				if known {
					obj.Size = int64(size)
				}
				got, err := v.e.Put(ctx, n, obj, &chunky{r: bytes.NewReader(data), max: rd}, PutOptions{})
				if err != nil {
					t.Fatalf("%s: %v", n.Object, err)
				}
				if got.Size != int64(size) || got.ETag != md5hex(data) {
					t.Fatalf("%s: put returned size %d etag %s", n.Object, got.Size, got.ETag)
				}
				if b := v.mustRead(n); !bytes.Equal(b, data) {
					t.Fatalf("%s: read back %d bytes, differ", n.Object, len(b))
				}
				if size > DefaultInlineThreshold {
					files++
				}
			}
		}
	}
	if c := fs.created.Load(); c != files {
		t.Errorf("%d files created for direct I/O, want %d", c, files)
	}
	t.Logf("%s: %d of %d data files still direct when closed (the others had an unaligned tail, or direct I/O is refused here)",
		dir, fs.direct.Load(), fs.created.Load())
	if names, err := fs.List(fs.PathJoin(dir, objectsDir, tmpDir)); err != nil || len(names) != 0 {
		t.Errorf("temp files left: %v %v", names, err)
	}
	// And after a restart.
	v.reopen()
	r = rand.New(rand.NewPCG(5, 6))
	for _, size := range []int{0, 1, 4095, 4096, 4097, 1 << 20, 1<<20 + 1, 8<<20 + 123} {
		for _, known := range []bool{true, false} {
			for _, rd := range []int{1 << 20, 1000} {
				data := randBytes(r, size)
				n := name(fmt.Sprintf("obj-%d-%v-%d", size, known, rd))
				if b := v.mustRead(n); !bytes.Equal(b, data) {
					t.Fatalf("%s after reopen: read back %d bytes, differ", n.Object, len(b))
				}
			}
		}
	}
}

func TestDirectPutsOnDisk(t *testing.T) { testDirectPuts(t, t.TempDir()) }

// On tmpfs, O_DIRECT is refused before Linux 6.6 (the files fall back to buffered I/O) and
// accepted since; the objects must come back either way.
func TestDirectPutsOnTmpfs(t *testing.T) {
	if st, err := os.Stat("/dev/shm"); err != nil || !st.IsDir() {
		t.Skip("no /dev/shm on this machine")
	}
	dir, err := os.MkdirTemp("/dev/shm", "cairn-engine-test-")
	if err != nil {
		t.Skipf("/dev/shm not writable: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	testDirectPuts(t, dir)
}
