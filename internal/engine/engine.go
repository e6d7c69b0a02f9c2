// Package engine stores the objects of one device: small objects inline in the device's LSM
// (Pebble) together with their metadata, so that concurrent PUTs share WAL fsyncs; large objects
// as data files written temp → fsync → rename → fsync dir and recorded in the LSM only once
// durable. Every record and every data block carries a checksum that is verified on read.
package engine

import (
	"context"
	"io"
	"log/slog"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/vfs"
)

// Config configures an Engine.
type Config struct {
	// Dir is the device's root directory; data files live below Dir/objects.
	Dir string
	// FS is the file system all file I/O goes through (vfs.Default in production).
	FS vfs.FS
	// DB is the device's LSM, shared with the listing index. The engine owns keys that start
	// with 'o'.
	DB *pebble.DB
	// InlineThreshold: objects of at most this many bytes are stored inline in the LSM.
	InlineThreshold int64
	Logger          *slog.Logger
}

// PutOptions hook into a PUT.
type PutOptions struct {
	// BeforeCommit runs after the whole body has been read and before anything becomes
	// visible, with the object's final metadata (Size, ETag filled in). It may add to the
	// metadata; an error aborts the PUT and nothing is stored.
	BeforeCommit func(obj *meta.Object) error
	// InBatch adds further writes (the container listing entry) to the batch that commits the
	// object, atomically with it. It runs with the object's name locked.
	InBatch func(b *pebble.Batch, obj *meta.Object) error
}

// Reader is an open object version: its metadata and (a range of) its bytes. Reads verify
// checksums and return an error wrapping meta.ErrCorrupt instead of bad bytes.
type Reader struct {
	Object meta.Object
	// Offset and Length are the byte range the reader returns (the whole object without a
	// range).
	Offset, Length int64
	io.ReadCloser
}

// Engine stores the objects of one device.
type Engine struct{}

// Open opens the engine on a device, removing data files that no record refers to (what a crash
// between writing a file and committing its record leaves).
func Open(cfg Config) (*Engine, error) { panic("not implemented") }

// Close releases the engine's resources; it does not close the shared DB.
func (e *Engine) Close() error { panic("not implemented") }

// Put stores an object version. obj.Timestamp must be set; obj.Size is the exact body length, or
// -1 when unknown (chunked uploads). It returns meta.ErrConflict when a version with the same or
// a newer timestamp exists, meta.ErrIncompleteBody / meta.ErrBodyTooLong on a length mismatch,
// meta.ErrInsufficientStorage when the disk is full. Success means data and metadata are synced.
func (e *Engine) Put(ctx context.Context, part uint32, name meta.ObjectName, obj meta.Object, body io.Reader, opts PutOptions) (meta.Object, error) {
	panic("not implemented")
}

// Get opens the current version of an object, or the given range of it. A tombstone or a
// missing object is meta.ErrNotFound; an unsatisfiable range is meta.ErrInvalidRange.
func (e *Engine) Get(ctx context.Context, part uint32, name meta.ObjectName, rng *meta.Range) (*Reader, error) {
	panic("not implemented")
}

// Stat returns the current version's metadata, including a tombstone (Deleted set, no error).
// A name never written is meta.ErrNotFound.
func (e *Engine) Stat(ctx context.Context, part uint32, name meta.ObjectName) (meta.Object, error) {
	panic("not implemented")
}

// DeleteOptions hook into a DELETE.
type DeleteOptions struct {
	// InBatch adds further writes (removing the listing entry) to the batch that commits the
	// tombstone. prev is the version being deleted.
	InBatch func(b *pebble.Batch, prev *meta.Object) error
}

// Delete writes a tombstone at ts, removing the current version (meta.ErrNotFound if there is
// none; meta.ErrConflict if it is newer than ts).
func (e *Engine) Delete(ctx context.Context, part uint32, name meta.ObjectName, ts meta.Timestamp, opts DeleteOptions) error {
	panic("not implemented")
}

// UpdateMeta rewrites the current version's metadata at timestamp ts (Swift POST), keeping its
// bytes. update may change Headers, UserMeta, SysMeta and ContentType.
func (e *Engine) UpdateMeta(ctx context.Context, part uint32, name meta.ObjectName, ts meta.Timestamp, update func(*meta.Object) error, opts PutOptions) (meta.Object, error) {
	panic("not implemented")
}
