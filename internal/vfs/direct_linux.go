package vfs

import (
	"errors"
	"syscall"

	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"
)

// setDirect turns O_DIRECT on or off for an open file. A variable so that tests can make the file
// system refuse it.
var setDirect = func(fd uintptr, on bool) error {
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	if errno != 0 {
		return errno
	}
	if on {
		flags |= syscall.O_DIRECT
	} else {
		flags &^= syscall.O_DIRECT
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETFL, flags); errno != 0 {
		return errno
	}
	return nil
}

// CreateDirect creates the file as FS.Create does, then turns on O_DIRECT. A file system that
// refuses O_DIRECT (EINVAL) gets an ordinary buffered file.
func (fs osFS) CreateDirect(name string, category pebblevfs.DiskWriteCategory) (File, error) {
	f, err := fs.FS.Create(name, category)
	if err != nil {
		return nil, err
	}
	fd := f.Fd()
	if fd == pebblevfs.InvalidFd || setDirect(fd, true) != nil {
		return f, nil
	}
	return &directFile{File: f, fd: fd, on: true}, nil
}

// directFile writes aligned buffers with O_DIRECT, and everything from the first unaligned or
// refused write on through the page cache.
type directFile struct {
	File
	fd  uintptr
	off int64 // bytes written by Write: the file offset
	on  bool  // O_DIRECT is set
}

func (f *directFile) direct() bool { return f.on }

// buffered clears O_DIRECT for the rest of the file's life.
func (f *directFile) buffered() error {
	if !f.on {
		return nil
	}
	if err := setDirect(f.fd, false); err != nil {
		return err
	}
	f.on = false
	return nil
}

func (f *directFile) Write(p []byte) (int, error) {
	n := 0
	if f.on {
		if k := len(p) &^ (Alignment - 1); k > 0 && f.off%Alignment == 0 && isAligned(p) {
			w, err := f.File.Write(p[:k])
			n += w
			f.off += int64(w)
			p = p[w:]
			if err != nil && !errors.Is(err, syscall.EINVAL) {
				return n, err
			}
			// EINVAL: the file system took the file but refuses direct writes like this one
			// (an alignment it needs beyond ours); the rest goes through the page cache.
		}
		if len(p) > 0 {
			if err := f.buffered(); err != nil {
				return n, err
			}
		}
	}
	if len(p) == 0 {
		return n, nil
	}
	w, err := f.File.Write(p)
	f.off += int64(w)
	return n + w, err
}

// WriteAt is not used on direct files; it goes through the page cache.
func (f *directFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.buffered(); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}
