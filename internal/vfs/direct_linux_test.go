package vfs

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"
)

// directSizes are the file sizes every direct-I/O test writes and reads back.
var directSizes = []int{0, 1, 4095, 4096, 4097, 1 << 20, 1<<20 + 1, 8<<20 + 123}

func randData(n int) []byte {
	r := rand.New(rand.NewPCG(uint64(n), 3))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// writeChunked writes data through f the way the engine does: full aligned buffers of chunk
// bytes, then the tail.
func writeChunked(t *testing.T, f File, data []byte, chunk int) {
	t.Helper()
	buf := AlignedBuffer(chunk)
	for len(data) > 0 {
		n := copy(buf, data)
		if w, err := f.Write(buf[:n]); w != n || err != nil {
			t.Fatalf("write of %d: %d, %v", n, w, err)
		}
		data = data[n:]
	}
}

func readBack(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: read back %d bytes, want %d (first difference at %d)", path, len(got), len(want), firstDiff(got, want))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestAlignedBuffer(t *testing.T) {
	for _, n := range []int{1, 100, 4096, 65536 + 3, 1 << 20} {
		for range 10 {
			b := AlignedBuffer(n)
			if len(b) != n || cap(b) != n || !isAligned(b) {
				t.Fatalf("AlignedBuffer(%d): len %d cap %d aligned %v", n, len(b), cap(b), isAligned(b))
			}
		}
	}
}

// testDirectDir writes and reads back every size in dir through Default's CreateDirect.
func testDirectDir(t *testing.T, dir string) {
	dc, ok := Default.(DirectCreator)
	if !ok {
		t.Fatal("Default does not implement DirectCreator")
	}
	for _, size := range directSizes {
		for _, chunk := range []int{Alignment, 1 << 20} {
			t.Run(fmt.Sprintf("%d/chunk=%d", size, chunk), func(t *testing.T) {
				path := filepath.Join(dir, fmt.Sprintf("f-%d-%d", size, chunk))
				f, err := dc.CreateDirect(path, "test")
				if err != nil {
					t.Fatal(err)
				}
				direct := IsDirect(f)
				data := randData(size)
				writeChunked(t, f, data, chunk)
				// Whole aligned writes keep direct I/O; an unaligned tail ends it.
				if want := direct && size%Alignment == 0; IsDirect(f) != want {
					t.Errorf("direct after writing %d bytes: %v, want %v", size, IsDirect(f), want)
				}
				if err := f.Sync(); err != nil {
					t.Fatal(err)
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
				readBack(t, path, data)
			})
		}
	}
}

func TestDirectOnDisk(t *testing.T) {
	dir := t.TempDir()
	f, err := Default.(DirectCreator).CreateDirect(filepath.Join(dir, "probe"), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: direct I/O %v", dir, IsDirect(f))
	f.Close()
	testDirectDir(t, dir)
}

// TestDirectOnTmpfs runs on /dev/shm: before Linux 6.6 tmpfs refuses O_DIRECT and the files
// fall back to buffered I/O; since, it accepts it. Either way the bytes must come back.
func TestDirectOnTmpfs(t *testing.T) {
	if st, err := os.Stat("/dev/shm"); err != nil || !st.IsDir() {
		t.Skip("no /dev/shm on this machine")
	}
	dir, err := os.MkdirTemp("/dev/shm", "cairn-vfs-test-")
	if err != nil {
		t.Skipf("/dev/shm not writable: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f, err := Default.(DirectCreator).CreateDirect(filepath.Join(dir, "probe"), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tmpfs %s: direct I/O %v", dir, IsDirect(f))
	f.Close()
	testDirectDir(t, dir)
}

// refuseDirect makes setDirect fail with EINVAL when it would turn O_DIRECT on, as a file
// system without direct I/O does.
func refuseDirect(t *testing.T) {
	old := setDirect
	setDirect = func(fd uintptr, on bool) error {
		if on {
			return syscall.EINVAL
		}
		return old(fd, on)
	}
	t.Cleanup(func() { setDirect = old })
}

func TestDirectRefusedFallsBack(t *testing.T) {
	refuseDirect(t)
	dir := t.TempDir()
	for _, size := range directSizes {
		path := filepath.Join(dir, fmt.Sprint(size))
		f, err := Default.(DirectCreator).CreateDirect(path, "test")
		if err != nil {
			t.Fatal(err)
		}
		if IsDirect(f) {
			t.Fatal("direct although refused")
		}
		data := randData(size)
		writeChunked(t, f, data, 1<<20)
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		readBack(t, path, data)
	}
}

// einvalFile refuses writes with EINVAL while *on (the simulated O_DIRECT flag) is set, as a file
// system does that accepts O_DIRECT at open but needs a coarser alignment than ours.
type einvalFile struct {
	File
	on     *bool
	writes int // writes attempted while on
}

func (f *einvalFile) Write(p []byte) (int, error) {
	if *f.on {
		f.writes++
		return 0, &os.PathError{Op: "write", Path: "x", Err: syscall.EINVAL}
	}
	return f.File.Write(p)
}

func TestDirectWriteRefusedFallsBack(t *testing.T) {
	mem := pebblevfs.NewMem()
	on := true
	old := setDirect
	setDirect = func(fd uintptr, v bool) error { on = v; return nil }
	t.Cleanup(func() { setDirect = old })
	for _, size := range directSizes {
		inner, err := mem.Create(fmt.Sprint(size), "test")
		if err != nil {
			t.Fatal(err)
		}
		on = true
		ef := &einvalFile{File: inner, on: &on}
		f := &directFile{File: ef, on: true}
		data := randData(size)
		writeChunked(t, f, data, 1<<20)
		if size >= Alignment && (ef.writes != 1 || IsDirect(f)) {
			t.Fatalf("%d bytes: %d refused writes, direct %v; want 1, false", size, ef.writes, IsDirect(f))
		}
		f.Close()
		g, err := mem.Open(fmt.Sprint(size))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(g)
		g.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read back %d bytes (%v), differ", size, len(got), err)
		}
	}
}

// Buffers that are not aligned in memory, and writes that leave the file offset unaligned,
// switch to buffered I/O without losing or reordering bytes.
func TestDirectUnalignedWrites(t *testing.T) {
	dir := t.TempDir()
	data := randData(3<<20 + 5)
	cases := map[string]func(t *testing.T, f File){
		"unaligned address": func(t *testing.T, f File) {
			buf := AlignedBuffer(1<<20 + 1)[1:]
			for p := data; len(p) > 0; {
				n := copy(buf, p)
				if w, err := f.Write(buf[:n]); w != n || err != nil {
					t.Fatalf("write of %d: %d, %v", n, w, err)
				}
				p = p[n:]
			}
		},
		"unaligned offset": func(t *testing.T, f File) {
			writeChunked(t, f, data[:100], 1<<20) // a short write ends direct I/O
			writeChunked(t, f, data[100:], 1<<20)
		},
		"aligned then tail then aligned": func(t *testing.T, f File) {
			writeChunked(t, f, data[:1<<20], 1<<20)
			writeChunked(t, f, data[1<<20:1<<20+7], 1<<20)
			writeChunked(t, f, data[1<<20+7:], 1<<20)
		},
	}
	for name, write := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			f, err := Default.(DirectCreator).CreateDirect(path, "test")
			if err != nil {
				t.Fatal(err)
			}
			write(t, f)
			if IsDirect(f) {
				t.Error("still direct after an unaligned write")
			}
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			readBack(t, path, data)
		})
	}
}
