// Package vfs is the one file-system interface through which every byte a storage device writes
// or reads passes: the object engine's data files and the LSM (Pebble) alike. Production uses
// the OS; tests use an in-memory FS that can simulate a crash (keeping only what was synced) or
// inject faults such as a full disk.
package vfs

import pebblevfs "github.com/cockroachdb/pebble/v2/vfs"

// FS is Pebble's file-system interface, so that one implementation serves both Pebble and the
// engine's own files.
type FS = pebblevfs.FS

// File is an open file of an FS.
type File = pebblevfs.File

// Default is the operating system's file system. It implements DirectCreator.
var Default FS = osFS{pebblevfs.Default}
