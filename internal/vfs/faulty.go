package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"
)

// ErrInjected is the error a Faulty FS returns for an injected sync or I/O failure that is not
// a full disk.
var ErrInjected = errors.New("vfs: injected fault")

// Faulty wraps an FS and injects faults on command: a full disk (writes fail with ENOSPC once a
// byte budget is spent) and failing syncs. It lives outside _test files so that the tests of
// every package that writes through an FS (engine, index, storage node) can use it. The zero
// budget means "unlimited"; all controls are safe for concurrent use.
type Faulty struct {
	FS // the wrapped FS; methods not overridden below pass straight through

	written   atomic.Int64 // bytes written through matching files since the last SetWriteLimit
	limit     atomic.Int64 // <= 0: unlimited
	failSyncs atomic.Int64 // number of upcoming syncs to fail
	hold      atomic.Pointer[syncHold]

	mu    sync.Mutex
	match func(path string) bool // which files faults apply to; nil: all
}

// NewFaulty wraps inner; with no control set it behaves exactly like inner.
func NewFaulty(inner FS) *Faulty {
	return &Faulty{FS: inner}
}

// SetWriteLimit simulates a disk with n free bytes: once more than n bytes have been written (from
// now on) through files that match the filter, writes fail with an error satisfying
// errors.Is(err, syscall.ENOSPC). The write that crosses the limit is partial, as on a real
// disk. n <= 0 removes the limit.
func (f *Faulty) SetWriteLimit(n int64) {
	f.written.Store(0)
	f.limit.Store(n)
}

// FailSyncs makes the next n syncs (file Sync, SyncData, SyncTo, directory Sync) of matching
// files fail with ErrInjected.
func (f *Faulty) FailSyncs(n int) { f.failSyncs.Store(int64(n)) }

// SetFilter restricts injected faults to files whose path makes match return true (nil: all
// files). Tests use it to fill the disk for data files while the LSM keeps working, or the
// reverse.
func (f *Faulty) SetFilter(match func(path string) bool) {
	f.mu.Lock()
	f.match = match
	f.mu.Unlock()
}

// Written reports the bytes written through matching files since the last SetWriteLimit.
func (f *Faulty) Written() int64 { return f.written.Load() }

func (f *Faulty) applies(path string) bool {
	f.mu.Lock()
	m := f.match
	f.mu.Unlock()
	return m == nil || m(path)
}

// noSpace builds the error a full disk returns, in the shape the os package uses.
func noSpace(op, path string) error {
	return &os.PathError{Op: op, Path: path, Err: syscall.ENOSPC}
}

// reserve accounts for n bytes about to be written and returns how many of them fit.
func (f *Faulty) reserve(n int) (int, bool) {
	limit := f.limit.Load()
	if limit <= 0 {
		f.written.Add(int64(n))
		return n, true
	}
	after := f.written.Add(int64(n))
	if after <= limit {
		return n, true
	}
	before := after - int64(n)
	fit := int64(0)
	if before < limit {
		fit = limit - before
	}
	// Give back what was not written so Written stays truthful.
	f.written.Add(fit - int64(n))
	return int(fit), false
}

// syncHold holds syncs back until released (HoldSyncs).
type syncHold struct {
	held     chan struct{} // receives one value each time a sync starts to wait
	released chan struct{} // closed by the release
}

// HoldSyncs makes syncs of matching files wait until release is called: a test can look at what
// a writer has made visible before its sync returned. held receives a value each time a sync
// starts waiting.
func (f *Faulty) HoldSyncs() (held <-chan struct{}, release func()) {
	h := &syncHold{held: make(chan struct{}, 64), released: make(chan struct{})}
	f.hold.Store(h)
	var once sync.Once
	return h.held, func() {
		once.Do(func() {
			f.hold.CompareAndSwap(h, nil)
			close(h.released)
		})
	}
}

func (f *Faulty) syncFault() bool {
	if h := f.hold.Load(); h != nil {
		select {
		case h.held <- struct{}{}:
		default:
		}
		<-h.released
	}
	for {
		n := f.failSyncs.Load()
		if n <= 0 {
			return false
		}
		if f.failSyncs.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

func (f *Faulty) wrap(file File, path string, err error) (File, error) {
	if err != nil || !f.applies(path) {
		return file, err
	}
	return &faultyFile{File: file, fs: f, path: path}, nil
}

// Create implements FS.
func (f *Faulty) Create(name string, category pebblevfs.DiskWriteCategory) (File, error) {
	if f.applies(name) && f.limit.Load() > 0 && f.written.Load() >= f.limit.Load() {
		return nil, noSpace("create", name)
	}
	file, err := f.FS.Create(name, category)
	return f.wrap(file, name, err)
}

// OpenReadWrite implements FS.
func (f *Faulty) OpenReadWrite(name string, category pebblevfs.DiskWriteCategory, opts ...pebblevfs.OpenOption) (File, error) {
	file, err := f.FS.OpenReadWrite(name, category, opts...)
	return f.wrap(file, name, err)
}

// ReuseForWrite implements FS.
func (f *Faulty) ReuseForWrite(oldname, newname string, category pebblevfs.DiskWriteCategory) (File, error) {
	file, err := f.FS.ReuseForWrite(oldname, newname, category)
	return f.wrap(file, newname, err)
}

// OpenDir implements FS; directory syncs are subject to FailSyncs.
func (f *Faulty) OpenDir(name string) (File, error) {
	file, err := f.FS.OpenDir(name)
	return f.wrap(file, name, err)
}

// GetDiskUsage implements FS; under a write limit it reports the bytes left as available, so
// that free-space checks see the simulated full disk coming.
func (f *Faulty) GetDiskUsage(path string) (pebblevfs.DiskUsage, error) {
	u, err := f.FS.GetDiskUsage(path)
	limit := f.limit.Load()
	if limit <= 0 || !f.applies(path) {
		return u, err
	}
	avail := uint64(max(0, limit-f.written.Load()))
	if err != nil {
		// The inner FS cannot tell (an in-memory FS): the simulated disk is all there is.
		return pebblevfs.DiskUsage{AvailBytes: avail, TotalBytes: uint64(limit), UsedBytes: uint64(limit) - avail}, nil
	}
	if avail < u.AvailBytes {
		u.UsedBytes += u.AvailBytes - avail
		u.AvailBytes = avail
	}
	return u, nil
}

// Unwrap implements FS.
func (f *Faulty) Unwrap() FS { return f.FS }

// faultyFile applies its FS's faults to one open file.
type faultyFile struct {
	File
	fs   *Faulty
	path string
}

func (ff *faultyFile) Write(p []byte) (int, error) {
	fit, ok := ff.fs.reserve(len(p))
	if ok {
		return ff.File.Write(p)
	}
	n, err := ff.File.Write(p[:fit])
	if err != nil {
		return n, err
	}
	return n, noSpace("write", ff.path)
}

func (ff *faultyFile) WriteAt(p []byte, off int64) (int, error) {
	fit, ok := ff.fs.reserve(len(p))
	if ok {
		return ff.File.WriteAt(p, off)
	}
	n, err := ff.File.WriteAt(p[:fit], off)
	if err != nil {
		return n, err
	}
	return n, noSpace("write", ff.path)
}

func (ff *faultyFile) Preallocate(off, length int64) error {
	if l := ff.fs.limit.Load(); l > 0 && ff.fs.written.Load()+length > l {
		// Preallocation is only advisory for Pebble; a real full disk may refuse it too.
		return noSpace("fallocate", ff.path)
	}
	return ff.File.Preallocate(off, length)
}

func (ff *faultyFile) Sync() error {
	if ff.fs.syncFault() {
		return fmt.Errorf("sync %s: %w", ff.path, ErrInjected)
	}
	return ff.File.Sync()
}

func (ff *faultyFile) SyncData() error {
	if ff.fs.syncFault() {
		return fmt.Errorf("sync %s: %w", ff.path, ErrInjected)
	}
	return ff.File.SyncData()
}

func (ff *faultyFile) SyncTo(length int64) (bool, error) {
	if ff.fs.syncFault() {
		return false, fmt.Errorf("sync %s: %w", ff.path, ErrInjected)
	}
	return ff.File.SyncTo(length)
}

// Fd hides the descriptor so that callers (Pebble's syncing file) cannot bypass the injected
// faults with direct system calls.
func (ff *faultyFile) Fd() uintptr { return pebblevfs.InvalidFd }

var (
	_ FS        = (*Faulty)(nil)
	_ File      = (*faultyFile)(nil)
	_ io.Writer = (*faultyFile)(nil)
)
