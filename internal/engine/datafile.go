package engine

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	iofs "io/fs"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/vfs"
)

// BlockSize is the unit of the per-block CRC32C kept for data files. 64 KiB keeps a small range
// read cheap (it reads and verifies at most two 64 KiB blocks around what it returns, instead of
// up to two MiB with 1 MiB blocks), while the checksum list stays small: 4 bytes per 64 KiB is
// 8 KiB of record for a 128 MiB object. Records store their block size, so it can change later.
const BlockSize = 64 << 10

// copyChunk is how much of a body is buffered per write of a data file: one write of 1 MiB
// (aligned for direct I/O, see vfs.DirectCreator) instead of many small ones.
const copyChunk = 1 << 20

// bufferedChunk is the write size of a data file written through the page cache.
const bufferedChunk = 256 << 10

const (
	objectsDir    = "objects"
	tmpDir        = "tmp"
	quarantineDir = "quarantine"
	dataSuffix    = ".data"
	tmpSuffix     = ".tmp"
)

// storageErr wraps an error of the FS or the LSM, marking a full disk as
// meta.ErrInsufficientStorage so that it travels up as HTTP 507.
func storageErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("engine: %s: %w: %w", op, meta.ErrInsufficientStorage, err)
	}
	return fmt.Errorf("engine: %s: %w", op, err)
}

// notExist reports whether err says a file does not exist. The FS wraps the OS's errors (with
// a stack), which os.IsNotExist does not look through.
func notExist(err error) bool { return errors.Is(err, iofs.ErrNotExist) }

// nameHash names an object's data files: hex MD5 of its key. Its first two digits pick one of
// 256 directories so that no directory grows huge.
func nameHash(key []byte) string {
	sum := md5.Sum(key)
	return hex.EncodeToString(sum[:])
}

// dataFileName is the path, relative to Dir/objects, of a new data file for the version of key
// written at ts. Every call names a file of its own (the version's timestamp, then a value this
// process never repeats), so a write never replaces a file a record already points at: not the
// old version's, which readers may still be reading, and not the same version's, which a retried
// or replicated write of that timestamp would otherwise overwrite before its commit is refused.
func dataFileName(key []byte, ts meta.Timestamp) string {
	h := nameHash(key)
	return h[:2] + "/" + h + "-" + strconv.FormatInt(int64(ts), 10) + "-" + strconv.FormatInt(int64(meta.Now()), 36) + dataSuffix
}

// hashOfDataFile returns the name-hash part of a data file's base name.
func hashOfDataFile(base string) (string, bool) {
	h, rest, ok := strings.Cut(base, "-")
	return h, ok && len(h) == 32 && strings.HasSuffix(rest, dataSuffix)
}

// summer computes, while bytes stream by, everything a record keeps about them: MD5 (the ETag),
// CRC32C of all bytes, and CRC32C of each BlockSize block.
type summer struct {
	md5    hash.Hash
	n      int64
	crc    uint32
	blk    uint32 // CRC of the current, incomplete block
	blocks []uint32
}

func newSummer() *summer { return &summer{md5: md5.New()} }

func (s *summer) write(p []byte) {
	s.md5.Write(p)
	s.crc = crc32.Update(s.crc, castagnoli, p)
	for len(p) > 0 {
		room := BlockSize - int(s.n%BlockSize)
		c := min(room, len(p))
		s.blk = crc32.Update(s.blk, castagnoli, p[:c])
		s.n += int64(c)
		p = p[c:]
		if c == room {
			s.blocks = append(s.blocks, s.blk)
			s.blk = 0
		}
	}
}

// finish closes the last partial block and returns the hex MD5.
func (s *summer) finish() string {
	if s.n%BlockSize != 0 {
		s.blocks = append(s.blocks, s.blk)
	}
	return hex.EncodeToString(s.md5.Sum(nil))
}

// received is a body read to its end: inline bytes, or a synced temp file.
type received struct {
	inline []byte
	tmp    string // path of the temp file, "" when inline
	sum    *summer
	etag   string
}

var tmpSeq atomic.Uint64

// receive reads body to its end, enforcing the declared size (-1: unknown). Up to the inline
// threshold it buffers in memory; beyond, it streams to a synced temp file. Any error leaves
// nothing behind.
func (e *Engine) receive(ctx context.Context, declared int64, body io.Reader, space *spaceHold) (*received, error) {
	if declared > e.cfg.InlineThreshold {
		// Known to need a file: stream it there without buffering a head first.
		return e.receiveFile(ctx, declared, nil, body, space)
	}
	limit := e.cfg.InlineThreshold
	if declared >= 0 && declared < limit {
		limit = declared
	}
	// One byte more than fits inline tells "inline" from "file" (and detects a body longer
	// than declared) without a second pass.
	buf := make([]byte, 0, limit+1)
	eof := false
	for len(buf) < cap(buf) {
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			eof = true
			break
		}
		if err != nil {
			return nil, fmt.Errorf("engine: reading body: %w", err)
		}
	}
	if !eof && int64(len(buf)) > limit && declared >= 0 && declared <= e.cfg.InlineThreshold {
		return nil, fmt.Errorf("engine: more than %d bytes: %w", declared, meta.ErrBodyTooLong)
	}
	if eof {
		if declared >= 0 && int64(len(buf)) < declared {
			return nil, fmt.Errorf("engine: %d of %d bytes: %w", len(buf), declared, meta.ErrIncompleteBody)
		}
		s := newSummer()
		s.write(buf)
		return &received{inline: buf, sum: s, etag: s.finish()}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return e.receiveFile(ctx, declared, buf, body, space)
}

// receiveFile streams head and the rest of body into a new temp file and syncs it. The body is
// read into a pooled buffer aligned for direct I/O, hashed right after each read (while the
// bytes are in the CPU cache) and written a full buffer at a time, so that on a file system
// with direct I/O every write but the tail skips the page cache.
func (e *Engine) receiveFile(ctx context.Context, declared int64, head []byte, body io.Reader, space *spaceHold) (_ *received, err error) {
	fs := e.cfg.FS
	name := fs.PathJoin(e.tmpPath, fmt.Sprintf("%x-%d%s", tmpSeq.Add(1), meta.Now(), tmpSuffix))
	var f vfs.File
	if d, ok := fs.(vfs.DirectCreator); ok {
		f, err = d.CreateDirect(name, "cairn-object")
	} else {
		f, err = fs.Create(name, "cairn-object")
	}
	if err != nil {
		return nil, storageErr("creating temp file", err)
	}
	closed := false
	defer func() {
		if !closed {
			f.Close()
		}
		if err != nil {
			if rerr := fs.Remove(name); rerr != nil && !notExist(rerr) {
				e.log.Warn("removing temp file", "file", name, "err", rerr)
			}
		}
	}()
	chunk := e.chunks.Get().(*[]byte)
	defer e.chunks.Put(chunk)
	buf := (*chunk)[:0]
	if !vfs.IsDirect(f) {
		// Through the page cache, smaller writes copy bytes that are still in the CPU cache
		// from hashing them.
		buf = buf[:0:bufferedChunk]
	}
	s := newSummer()
	// took accounts for p, just appended to buf, and writes buf out once full.
	took := func(p []byte) error {
		if declared >= 0 && s.n+int64(len(p)) > declared {
			return fmt.Errorf("engine: more than %d bytes: %w", declared, meta.ErrBodyTooLong)
		}
		if declared < 0 {
			// A body of unknown length holds space as it arrives.
			if err := space.growTo(s.n + int64(len(p))); err != nil {
				return err
			}
		}
		s.write(p)
		if len(buf) == cap(buf) {
			return e.writeOut(f, &buf)
		}
		return nil
	}
	for len(head) > 0 {
		n := copy(buf[len(buf):cap(buf)], head)
		buf = buf[:len(buf)+n]
		if err := took(buf[len(buf)-n:]); err != nil {
			return nil, err
		}
		head = head[n:]
	}
	for {
		n, rerr := body.Read(buf[len(buf):cap(buf)])
		if n > 0 {
			buf = buf[:len(buf)+n]
			if err := took(buf[len(buf)-n:]); err != nil {
				return nil, err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, fmt.Errorf("engine: reading body: %w", rerr)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if declared >= 0 && s.n < declared {
		return nil, fmt.Errorf("engine: %d of %d bytes: %w", s.n, declared, meta.ErrIncompleteBody)
	}
	if err := e.writeOut(f, &buf); err != nil {
		return nil, err
	}
	e.fileSyncs.Add(1)
	if err := f.Sync(); err != nil {
		return nil, storageErr("syncing data file", err)
	}
	closed = true
	if err := f.Close(); err != nil {
		return nil, storageErr("closing data file", err)
	}
	return &received{tmp: name, sum: s, etag: s.finish()}, nil
}

// writeOut writes *buf to f and empties it.
func (e *Engine) writeOut(f vfs.File, buf *[]byte) error {
	if len(*buf) == 0 {
		return nil
	}
	if _, err := f.Write(*buf); err != nil {
		return storageErr("writing data file", err)
	}
	*buf = (*buf)[:0]
	return nil
}

// install renames a synced temp file to its final name and syncs the directory, after which the
// file survives a crash and a record may point at it.
func (e *Engine) install(tmp, rel string) error {
	fs := e.cfg.FS
	final := fs.PathJoin(e.objPath, rel)
	if err := fs.Rename(tmp, final); err != nil {
		return storageErr("renaming data file", err)
	}
	if err := e.syncDir(fs.PathDir(final)); err != nil {
		return err
	}
	return nil
}

func (e *Engine) syncDir(dir string) error {
	e.fileSyncs.Add(1)
	return storageErr("syncing directory", vfs.SyncDir(e.cfg.FS, dir))
}

// removeData removes a data file no record refers to any more. A failure only leaves garbage
// that the next Open collects, so it is logged, not returned.
func (e *Engine) removeData(rel string) {
	if err := e.cfg.FS.Remove(e.cfg.FS.PathJoin(e.objPath, rel)); err != nil && !notExist(err) {
		e.log.Warn("removing old data file", "file", rel, "err", err)
	}
}

// fileReader returns a range of a data file, verifying each block it touches before returning
// any of its bytes.
type fileReader struct {
	e      *Engine
	f      vfs.File
	rec    *record
	key    []byte // for quarantine
	raw    []byte // the record as read, for quarantine
	off    int64  // next byte to return
	end    int64  // end of the range
	blk    []byte // the verified block holding bytes from blkOff
	blkOff int64
	err    error
	// flagged: this reader found the version corrupt and flagged it (the auditor counts it).
	flagged bool
}

func (r *fileReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.off >= r.end {
		return 0, io.EOF
	}
	if r.off < r.blkOff || r.off >= r.blkOff+int64(len(r.blk)) || len(r.blk) == 0 {
		if err := r.load(r.off / r.rec.block); err != nil {
			r.err = err
			return 0, err
		}
	}
	in := r.blk[r.off-r.blkOff:]
	if rest := r.end - r.off; int64(len(in)) > rest {
		in = in[:rest]
	}
	n := copy(p, in)
	r.off += int64(n)
	return n, nil
}

func (r *fileReader) load(i int64) error {
	bs := r.rec.block
	start := i * bs
	size := min(bs, r.rec.dataLen-start)
	if r.blk == nil {
		r.blk = make([]byte, bs)
	}
	r.blk = r.blk[:size]
	n, err := r.f.ReadAt(r.blk, start)
	if int64(n) < size {
		r.blk = r.blk[:0]
		if err != nil && err != io.EOF {
			// The disk failed to read, which says nothing about the bytes: report it, and
			// leave the object alone.
			return storageErr(fmt.Sprintf("reading block %d", i), err)
		}
		err = io.ErrUnexpectedEOF
		// A data file shorter than its record says is corruption too.
		return r.corrupt(fmt.Sprintf("block %d: read %d of %d bytes: %v", i, n, size, err))
	}
	if got := crc32.Checksum(r.blk, castagnoli); got != r.rec.blocks[i] {
		r.blk = r.blk[:0]
		return r.corrupt(fmt.Sprintf("block %d checksum %08x, want %08x", i, got, r.rec.blocks[i]))
	}
	r.blkOff = start
	return nil
}

// corrupt handles a checksum failure of the version being read (Engine.corrupt).
func (r *fileReader) corrupt(why string) error {
	if r.e.flagCorrupt(r.key, r.raw, r.rec, why) {
		r.flagged = true
	}
	return corruptErr(r.key, why)
}

func (r *fileReader) Close() error { return r.f.Close() }
