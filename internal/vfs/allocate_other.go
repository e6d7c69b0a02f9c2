//go:build !linux

package vfs

import "errors"

// Allocate is not implemented here: errors.ErrUnsupported.
func Allocate(f File, n int64) error { return errors.ErrUnsupported }
