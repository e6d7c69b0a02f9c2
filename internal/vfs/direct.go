package vfs

import (
	"unsafe"

	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"
)

// Alignment is the address, length and file-offset granularity of direct I/O writes: a write
// through a file from DirectCreator.CreateDirect bypasses the page cache only when its buffer
// starts at a multiple of Alignment in memory, the file offset is one too, and its length is at
// least Alignment (the last len%Alignment bytes go through the page cache). 4096 satisfies every
// Linux block device with a logical block size of at most 4 KiB; a file system that wants more
// refuses the write, and the file falls back to buffered I/O.
const Alignment = 4096

// DirectCreator is implemented by a file system that can write new files with direct I/O
// (O_DIRECT on Linux), skipping the copy into the page cache and its writeback: worthwhile for
// large files written once and synced. It is an optional interface, detected with a type
// assertion, so that wrappers (Faulty) and in-memory file systems (tests, crash simulation) that
// do not implement it keep working with FS.Create.
type DirectCreator interface {
	// CreateDirect creates name like FS.Create. The file accepts any sequence of writes, but
	// writes them with direct I/O only as long as each buffer is aligned as Alignment says;
	// the first write that is not (an unaligned tail), or that the file system refuses,
	// switches the file to buffered I/O for good. Durability is unchanged: the caller still
	// syncs the file (its metadata and any buffered tail) and its directory.
	CreateDirect(name string, category pebblevfs.DiskWriteCategory) (File, error)
}

// IsDirect reports whether f, from DirectCreator.CreateDirect, still writes with direct I/O (it
// did not fall back to buffered I/O).
func IsDirect(f File) bool {
	d, ok := f.(interface{ direct() bool })
	return ok && d.direct()
}

// AlignedBuffer returns a buffer of n bytes whose first byte lies at a multiple of Alignment in
// memory, as direct I/O needs. (Go's garbage collector does not move heap objects.)
func AlignedBuffer(n int) []byte {
	b := make([]byte, n+Alignment)
	off := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) % Alignment); r != 0 {
		off = Alignment - r
	}
	return b[off : off+n : off+n]
}

// isAligned reports whether p starts at a multiple of Alignment in memory.
func isAligned(p []byte) bool {
	return len(p) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(p)))%Alignment == 0
}

// osFS is the operating system's file system (Pebble's), plus direct I/O where the platform
// has it.
type osFS struct{ FS }
