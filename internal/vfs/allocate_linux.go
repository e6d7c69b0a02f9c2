package vfs

import (
	"errors"
	"syscall"

	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"
)

// Allocate gives the file n bytes of disk blocks (its size becomes n) without writing them:
// space set aside at once, as a ballast file needs. errors.ErrUnsupported where the file has
// no descriptor (an in-memory FS) or its file system cannot allocate.
func Allocate(f File, n int64) error {
	fd := f.Fd()
	if fd == pebblevfs.InvalidFd {
		return errors.ErrUnsupported
	}
	err := syscall.Fallocate(int(fd), 0, 0, n)
	if errors.Is(err, syscall.EOPNOTSUPP) {
		return errors.ErrUnsupported
	}
	return err
}
