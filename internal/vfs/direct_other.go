//go:build !linux

package vfs

import pebblevfs "github.com/cockroachdb/pebble/v2/vfs"

// CreateDirect is FS.Create where direct I/O is not implemented.
func (fs osFS) CreateDirect(name string, category pebblevfs.DiskWriteCategory) (File, error) {
	return fs.FS.Create(name, category)
}
