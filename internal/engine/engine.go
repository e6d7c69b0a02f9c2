// Package engine stores the objects of one device: small objects inline in the device's LSM
// (Pebble) together with their metadata, so that concurrent PUTs share WAL fsyncs; large objects
// as data files written temp → fsync → rename → fsync dir and recorded in the LSM only once
// durable. Every record and every data block carries a checksum that is verified on read.
package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/vfs"
)

// DefaultInlineThreshold is the default largest object stored inline in the LSM. Up to 64 KiB the
// cost of a data file (a file create, two fsyncs, a directory entry) dominates a PUT; beyond it
// the bytes would inflate the WAL and compactions more than a file costs.
const DefaultInlineThreshold = 64 << 10

// MaxInlineThreshold bounds InlineThreshold: an inline object travels in one Pebble batch and
// one WAL record.
const MaxInlineThreshold = 4 << 20

// Config configures an Engine.
type Config struct {
	// Dir is the device's root directory; data files live below Dir/objects.
	Dir string
	// FS is the file system all file I/O goes through (vfs.Default in production).
	FS vfs.FS
	// DB is the device's LSM, shared with the listing index. The engine owns keys that start
	// with 'o' (object records), 'd' (data files in use), 'q' (versions flagged corrupt) and
	// 'm' (long manifest segment lists).
	DB *pebble.DB
	// InlineThreshold: objects of at most this many bytes are stored inline in the LSM.
	InlineThreshold int64
	Logger          *slog.Logger
	// ReserveBytes is free space kept for deletes and the LSM's own work: a PUT or metadata
	// update that would leave less free space on Dir's file system fails with
	// meta.ErrInsufficientStorage. This matters because Pebble treats a failed WAL write as
	// fatal (it exits the process), so a full disk must be refused before it reaches the WAL.
	// 0 means DefaultReserveBytes; negative disables the check.
	ReserveBytes int64
	// BallastBytes is the size of the ballast file kept in Dir, removed when a disk filled by
	// someone else leaves the index no room (see ballast.go). 0 means DefaultBallastBytes;
	// negative means none.
	BallastBytes int64
	// NameHash is the ring's name hash (its top 64 bits), which places each name in a
	// partition: the placement index (placement.go) is kept in its order. nil means
	// DefaultNameHash. NameHashID identifies it (the ring's hash path prefix and suffix, say):
	// when it differs from the one the device was indexed with, Open rebuilds the index.
	NameHash   func(meta.ObjectName) uint64
	NameHashID string
}

// DefaultReserveBytes is the default Config.ReserveBytes.
const DefaultReserveBytes = 256 << 20

// Validate fills in defaults (FS: vfs.Default, InlineThreshold: DefaultInlineThreshold, Logger:
// discard) and checks the rest.
func (c *Config) Validate() error {
	if c.Dir == "" {
		return errors.New("engine: Config.Dir is empty")
	}
	if c.DB == nil {
		return errors.New("engine: Config.DB is nil")
	}
	if c.FS == nil {
		c.FS = vfs.Default
	}
	if c.InlineThreshold == 0 {
		c.InlineThreshold = DefaultInlineThreshold
	}
	if c.InlineThreshold < 0 || c.InlineThreshold > MaxInlineThreshold {
		return fmt.Errorf("engine: InlineThreshold %d not in [0, %d]", c.InlineThreshold, MaxInlineThreshold)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.ReserveBytes == 0 {
		c.ReserveBytes = DefaultReserveBytes
	}
	if c.BallastBytes == 0 {
		c.BallastBytes = DefaultBallastBytes
	}
	if c.NameHash == nil {
		c.NameHash = DefaultNameHash
	}
	return nil
}

// PutOptions hook into a PUT.
type PutOptions struct {
	// BeforeCommit runs after the whole body has been read and before anything becomes
	// visible, with the object's final metadata (Size, ETag filled in). It may add to the
	// metadata; an error aborts the PUT and nothing is stored.
	BeforeCommit func(obj *meta.Object) error
	// InBatch adds further writes (the container listing entry) to the batch that commits the
	// object, atomically with it. It runs with the object's name locked; prev is the version
	// being replaced (a tombstone included), nil if there is none.
	InBatch func(b *pebble.Batch, obj, prev *meta.Object) error
	// If is checked against the version being replaced with the name locked, in the commit:
	// a write whose condition fails stores nothing and returns meta.ErrPreconditionFailed.
	If meta.Precondition
	// Companion (nil: none) is a second, bodiless object committed in the same batch; Put
	// fills in its outcome.
	Companion *Companion
	// New says that nothing is stored under the name: the write does not look for a version to
	// replace, which for a name never written costs a lookup that misses in every LSM level.
	// Only a caller that knows it may say so (a version name minted for this write, see
	// storage's timestamp floor); said wrongly, the record in place is overwritten unread, its
	// data file left for the sweep and its listing entry never replaced.
	New bool
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
type Engine struct {
	cfg     Config
	log     *slog.Logger
	objPath string // Dir/objects
	tmpPath string // Dir/objects/tmp
	quaPath string // Dir/quarantine
	seed    maphash.Seed
	locks   [lockStripes]sync.RWMutex
	chunks  sync.Pool // *[]byte of copyChunk bytes
	closed  atomic.Bool

	// Versions flagged corrupt (object key → struct{}), mirrored from their 'q' keys.
	flagged          sync.Map
	flaggedN         atomic.Int64
	checksumFailures atomic.Int64
	// fileSyncs counts fsyncs of data files and of directories (not the LSM's WAL, which
	// Pebble counts): with the WAL syncs, the synchronous disk operations of the device, which
	// `cairn advisor calibrate` measures per request.
	fileSyncs atomic.Int64
	orphans   atomic.Int64

	// Free space, sampled at most every diskCheckInterval, and the bytes writes in flight
	// hold (see space.go).
	availAt  atomic.Int64 // unix nanos of the sample
	avail    atomic.Int64
	inflight atomic.Int64
	// ballast is the size of the ballast file in place (0: none, or released).
	ballast        atomic.Int64
	ballastPending atomic.Bool // a re-creation runs
}

// Open opens the engine on a device, removing data files that no record refers to (what a crash
// between writing a file and committing its record leaves).
func Open(cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	fs := cfg.FS
	e := &Engine{
		cfg:     cfg,
		log:     cfg.Logger.With("component", "engine", "dir", cfg.Dir),
		objPath: fs.PathJoin(cfg.Dir, objectsDir),
		quaPath: fs.PathJoin(cfg.Dir, quarantineDir),
		seed:    maphash.MakeSeed(),
	}
	e.tmpPath = fs.PathJoin(e.objPath, tmpDir)
	e.chunks.New = func() any { b := vfs.AlignedBuffer(copyChunk); return &b }
	if err := e.prepareDirs(); err != nil {
		return nil, err
	}
	if err := e.loadCorrupt(); err != nil {
		return nil, err
	}
	if err := e.checkPlacement(); err != nil {
		return nil, err
	}
	if err := e.collectGarbage(); err != nil {
		return nil, err
	}
	e.ensureBallast()
	return e, nil
}

// prepareDirs creates the 256 hash directories, tmp and quarantine once, durably, so that a PUT
// only ever syncs the one directory it renames into.
func (e *Engine) prepareDirs() error {
	fs := e.cfg.FS
	for _, d := range []string{e.tmpPath, e.quaPath} {
		if err := vfs.MkdirAllDurable(fs, d, 0o755); err != nil {
			return storageErr("creating directories", err)
		}
	}
	for i := range 256 {
		if err := fs.MkdirAll(fs.PathJoin(e.objPath, fmt.Sprintf("%02x", i)), 0o755); err != nil {
			return storageErr("creating directories", err)
		}
	}
	for _, d := range []string{e.objPath, e.cfg.Dir} {
		if err := e.syncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// Close releases the engine's resources; it does not close the shared DB.
func (e *Engine) Close() error {
	e.closed.Store(true)
	return nil
}

var errClosed = errors.New("engine: closed")

func checkName(name meta.ObjectName) error {
	if name.Account == "" || name.Container == "" || name.Object == "" {
		return fmt.Errorf("engine: %q/%q/%q: %w", name.Account, name.Container, name.Object, meta.ErrInvalidName)
	}
	return nil
}

// load reads and verifies the record under key. It returns (nil, nil, nil) when there is none;
// raw is the record's bytes (owned by the caller).
func (e *Engine) load(key []byte) (*record, []byte, error) {
	v, closer, err := e.cfg.DB.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, storageErr("reading record", err)
	}
	raw := bytes.Clone(v)
	closer.Close()
	rec, err := decodeRecord(raw)
	if err != nil {
		return nil, raw, err
	}
	return rec, raw, nil
}

// Put stores an object version. obj.Timestamp must be set; obj.Size is the exact body length, or
// -1 when unknown (chunked uploads). It returns meta.ErrConflict when a version with the same or
// a newer timestamp exists, meta.ErrIncompleteBody / meta.ErrBodyTooLong on a length mismatch,
// meta.ErrInsufficientStorage when the disk is full. Success means data and metadata are synced.
//
// A manifest (obj.Manifest not nil) keeps the Size and ETag the caller gives, which describe the
// whole; its body (usually empty) is stored as is, without a length check when Size >= 0 is
// the manifest's total.
func (e *Engine) Put(ctx context.Context, name meta.ObjectName, obj meta.Object, body io.Reader, opts PutOptions) (meta.Object, error) {
	if e.closed.Load() {
		return meta.Object{}, errClosed
	}
	if err := checkName(name); err != nil {
		return meta.Object{}, err
	}
	if obj.Timestamp <= 0 {
		return meta.Object{}, fmt.Errorf("engine: put without timestamp: %w", meta.ErrInvalidName)
	}
	if body == nil {
		body = bytes.NewReader(nil)
	}
	key := objectKey(nil, name)
	// Refuse a stale write of a large body before reading it; the check that counts is
	// repeated under the lock below. For a small body the early lookup would cost more than
	// reading the body it saves (most PUTs create a name, and a lookup of a missing name
	// visits every LSM level).
	// A conditional write is checked early too, so that a doomed upload is refused before its
	// body is read.
	if c := opts.Companion; c != nil && !c.If.IsZero() {
		if cur, _, err := e.load(objectKey(nil, c.Name)); err == nil {
			if err := c.If.Check(cur.object()); err != nil {
				return meta.Object{}, fmt.Errorf("engine: put: companion: %w", err)
			}
		}
	}
	if !opts.New && (obj.Size < 0 || obj.Size > e.cfg.InlineThreshold || !opts.If.IsZero()) {
		if cur, _, err := e.load(key); err == nil {
			if err := opts.If.Check(cur.object()); err != nil {
				return meta.Object{}, fmt.Errorf("engine: put: %w", err)
			}
			if cur != nil && cur.obj.Timestamp >= obj.Timestamp && !(cur.obj.Timestamp == obj.Timestamp && e.isFlagged(key)) {
				return meta.Object{}, fmt.Errorf("engine: put at %d: %w", obj.Timestamp, &meta.NewerError{At: cur.obj.Timestamp})
			}
		}
	}
	declared := obj.Size
	if obj.Manifest != nil {
		declared = -1
	}
	initial := declared
	if initial < 0 {
		initial = e.cfg.InlineThreshold // what a body of unknown length may buffer in memory
	}
	space, err := e.holdSpace(initial)
	if err != nil {
		return meta.Object{}, err
	}
	written := int64(0)
	defer func() { space.release(written) }()
	got, err := e.receive(ctx, declared, body, space)
	if err != nil {
		return meta.Object{}, err
	}
	committed := false
	if got.tmp != "" {
		defer func() {
			if !committed {
				e.removeTmp(got.tmp)
			}
		}()
	}
	obj.Deleted = false
	if obj.Manifest == nil {
		obj.Size = got.sum.n
		obj.ETag = got.etag
	}
	if opts.BeforeCommit != nil {
		if err := opts.BeforeCommit(&obj); err != nil {
			return meta.Object{}, fmt.Errorf("engine: put aborted: %w", err)
		}
		obj.Deleted = false
	}
	rec := &record{obj: obj, dataLen: got.sum.n, dataCRC: got.sum.crc}
	rec.keepSegmentsApart()
	if got.tmp == "" {
		rec.inline = got.inline
	} else {
		rec.isFile = true
		rec.file = dataFileName(key, obj.Timestamp)
		rec.block = BlockSize
		rec.blocks = got.sum.blocks
		if err := ctx.Err(); err != nil {
			return meta.Object{}, err
		}
		// The file is durable under its final name before any record can point at it; if
		// the commit below does not happen, it is garbage that Open collects.
		if err := e.install(got.tmp, rec.file); err != nil {
			return meta.Object{}, err
		}
		committed = true // the temp name is gone; the final file is handled below
	}
	comp, err := e.companionWrite(opts.Companion, &rec.obj)
	var old *record
	if err == nil {
		_, old, err = e.commit(ctx, key, obj.Timestamp, opts.If, opts.New, func(*record) (*record, error) { return rec, nil },
			func(b *pebble.Batch, rec, old *record) error {
				if opts.InBatch != nil {
					return opts.InBatch(b, &rec.obj, old.object())
				}
				return nil
			}, comp)
	}
	if err != nil {
		if rec.isFile && !e.visible(key, rec) {
			e.removeData(rec.file)
		}
		return meta.Object{}, err
	}
	written = got.sum.n
	if old != nil && old.isFile && old.file != rec.file {
		e.removeData(old.file)
	}
	if comp != nil {
		e.companionDone(opts.Companion, comp)
	}
	return rec.obj, nil
}

func (e *Engine) removeTmp(name string) {
	if err := e.cfg.FS.Remove(name); err != nil && !notExist(err) {
		e.log.Warn("removing temp file", "file", name, "err", err)
	}
}

// visible reports whether rec is what key holds now. Pebble may apply a batch whose WAL sync
// failed; then its data file must stay.
func (e *Engine) visible(key []byte, rec *record) bool {
	cur, _, err := e.load(key)
	if err != nil {
		return true // unknown: keep the file, Open collects it if it is garbage
	}
	return cur != nil && cur.isFile && cur.file == rec.file
}

// commit writes the record build returns under key, if cond holds for the current version and
// ts is newer than its timestamp, together with what extra adds to the batch, and syncs. build and extra see the
// version being replaced (nil if none, or if its record is corrupt: a corrupt record must not
// block the write that repairs it). The name stays locked from reading the old record until
// the batch is durable, so concurrent writers of one name are ordered by timestamp while
// writers of different names share WAL syncs.
//
// comp (nil: none) is a companion committed in the same batch: both are durable after one
// sync, or neither is. Both names are locked, in stripe order, from reading their records
// until the batch is durable. A failed condition of either fails both; a companion that is not
// newer than its name's version, or that its admit refuses, is left out (comp.skipped), and
// the main record commits alone. (The main write's functions are parameters, not fields of a
// write, so that they stay on the stack: a plain PUT allocates nothing more for companions.)
func (e *Engine) commit(ctx context.Context, key []byte, ts meta.Timestamp, cond meta.Precondition, isNew bool,
	build func(old *record) (*record, error),
	extra func(b *pebble.Batch, rec, old *record) error,
	comp *write,
) (rec, old *record, err error) {
	i := e.stripe(key)
	if comp == nil {
		e.locks[i].Lock()
		defer e.locks[i].Unlock()
	} else {
		if bytes.Equal(key, comp.key) {
			return nil, nil, fmt.Errorf("engine: a companion of its own name %q: %w", key, meta.ErrInvalidName)
		}
		// Two writers that lock two names each, in the same order, cannot wait for each other.
		j := e.stripe(comp.key)
		i, j = min(i, j), max(i, j)
		e.locks[i].Lock()
		defer e.locks[i].Unlock()
		if j != i {
			e.locks[j].Lock()
			defer e.locks[j].Unlock()
		}
	}
	if !isNew {
		if old, err = e.loadOld(key); err != nil {
			return nil, nil, err
		}
	}
	if comp != nil {
		if comp.old, err = e.loadOld(comp.key); err != nil {
			return nil, nil, err
		}
	}
	// The conditions first: a conditional write that lost a race fails its condition (412),
	// whichever of the two writers carried the newer timestamp.
	if err := cond.Check(old.object()); err != nil {
		return nil, nil, fmt.Errorf("engine: %w", err)
	}
	if comp != nil {
		if err := comp.cond.Check(comp.old.object()); err != nil {
			return nil, nil, fmt.Errorf("engine: companion: %w", err)
		}
	}
	if err := e.checkNewer(key, ts, old); err != nil {
		return nil, nil, err
	}
	if rec, err = build(old); err != nil {
		return nil, nil, err
	}
	if comp != nil {
		if comp.skipped = e.checkNewer(comp.key, comp.ts, comp.old); comp.skipped == nil && comp.admit != nil {
			comp.skipped = comp.admit(comp.old)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	b := e.cfg.DB.NewBatch()
	defer b.Close()
	if err := extra(b, rec, old); err != nil {
		return nil, nil, fmt.Errorf("engine: adding to batch: %w", err)
	}
	unflag, err := e.addToBatch(b, key, rec, old)
	if err != nil {
		return nil, nil, storageErr("building batch", err)
	}
	if comp != nil && comp.skipped == nil {
		if err := comp.inBatch(b, comp.rec, comp.old); err != nil {
			return nil, nil, fmt.Errorf("engine: adding to batch: %w", err)
		}
		if comp.unflag, err = e.addToBatch(b, comp.key, comp.rec, comp.old); err != nil {
			return nil, nil, storageErr("building batch", err)
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return nil, nil, storageErr("committing record", err)
	}
	if unflag {
		e.forgetFlag(key)
	}
	if comp != nil && comp.unflag {
		e.forgetFlag(comp.key)
	}
	return rec, old, nil
}

// write is a companion record a commit stores beside its main one, and what became of it.
type write struct {
	key     []byte
	ts      meta.Timestamp
	cond    meta.Precondition
	rec     *record
	inBatch func(b *pebble.Batch, rec, old *record) error
	// admit decides whether the companion may replace the version in place: an error leaves
	// it out of the batch (skipped) and the main write commits alone.
	admit func(old *record) error

	old     *record
	skipped error // why it was left out (meta.ErrConflict: a version as new or newer is in place)
	unflag  bool
}

// checkNewer refuses a write at ts over old unless it is newer: meta.ErrConflict.
func (e *Engine) checkNewer(key []byte, ts meta.Timestamp, old *record) error {
	// A version flagged corrupt is replaced by a good copy of itself (replication's repair:
	// same timestamp), which would otherwise be refused as not newer.
	repair := old != nil && old.obj.Timestamp == ts && e.isFlagged(key)
	if old != nil && old.obj.Timestamp >= ts && !repair {
		// A version from a clock ahead of ours: later writes of this process must stamp above
		// it, or every one of them would lose too.
		meta.AdvanceClock(old.obj.Timestamp)
		return fmt.Errorf("engine: write at %d: %w", ts, &meta.NewerError{At: old.obj.Timestamp})
	}
	return nil
}

// loadOld reads the version a write under key replaces.
func (e *Engine) loadOld(key []byte) (*record, error) {
	old, raw, err := e.load(key)
	if err != nil {
		if !errors.Is(err, meta.ErrCorrupt) {
			return nil, err
		}
		// A record that does not decode stands for a version that exists but cannot be read:
		// a write or delete of the name replaces it (that is how it gets repaired), without
		// knowing what it held.
		e.log.Warn("replacing a corrupt record", "key", fmt.Sprintf("%q", key), "err", err)
		if !e.isFlagged(key) {
			e.saveQuarantined(key, raw)
		}
		old = &record{corrupt: true}
	}
	// The version being replaced is handed back whole (the proxy releases the segments a
	// manifest owned), so a segment list kept apart is read before the batch removes it.
	if err := e.loadSegments(key, old); err != nil {
		e.log.Warn("the segment list of a replaced manifest cannot be read; its segments are not released", "key", fmt.Sprintf("%q", key), "err", err)
	}
	return old, nil
}

// addToBatch adds a record and what it implies (placement, data file and segment keys, the
// end of a corrupt flag) to b.
func (e *Engine) addToBatch(b *pebble.Batch, key []byte, rec, old *record) (unflag bool, err error) {
	if err := b.Set(key, rec.encode(nil), nil); err != nil {
		return false, err
	}
	if err := e.placeInBatch(b, key, rec); err != nil {
		return false, err
	}
	if err := trackDataFiles(b, key, rec, old); err != nil {
		return false, err
	}
	if err := trackSegments(b, key, rec, old); err != nil {
		return false, err
	}
	return e.clearFlag(b, key)
}

// Get opens the current version of an object, or the given range of it. A tombstone or a
// missing object is meta.ErrNotFound; an unsatisfiable range is meta.ErrInvalidRange.
//
// For a manifest, Get returns the stored body (usually empty) whole and ignores rng: ranges
// over the segments are the proxy's business.
func (e *Engine) Get(ctx context.Context, name meta.ObjectName, rng *meta.Range) (*Reader, error) {
	if e.closed.Load() {
		return nil, errClosed
	}
	key := objectKey(nil, name)
	// A concurrent overwrite may remove the data file between reading the record and opening
	// the file; then the record has changed and reading it again finds the new version.
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if e.isFlagged(key) {
			return nil, e.errFlagged(name)
		}
		rec, raw, err := e.readRecord(key, e.loadWhole)
		if err != nil {
			if errors.Is(err, meta.ErrCorrupt) {
				return nil, e.corrupt(key, raw, rec, err.Error())
			}
			return nil, err
		}
		if rec == nil || rec.obj.Deleted {
			return nil, fmt.Errorf("engine: %q: %w", name.Object, meta.ErrNotFound)
		}
		off, n := int64(0), rec.dataLen
		if rng != nil && rec.obj.Manifest == nil {
			off, n, err = rng.Resolve(rec.dataLen)
			if err != nil {
				return nil, fmt.Errorf("engine: range of %d bytes: %w", rec.dataLen, err)
			}
		}
		r := &Reader{Object: rec.obj, Offset: off, Length: n}
		if !rec.isFile {
			if !rec.inlineIntact() {
				return nil, e.corrupt(key, raw, rec, "inline data checksum mismatch")
			}
			r.ReadCloser = io.NopCloser(bytes.NewReader(rec.inline[off : off+n]))
			return r, nil
		}
		f, err := e.cfg.FS.Open(e.cfg.FS.PathJoin(e.objPath, rec.file))
		if err != nil {
			if notExist(err) {
				if _, raw2, _ := e.load(key); !bytes.Equal(raw, raw2) && attempt < 3 {
					continue
				}
				return nil, e.corrupt(key, raw, rec, "data file missing")
			}
			return nil, storageErr("opening data file", err)
		}
		r.ReadCloser = &fileReader{e: e, f: f, rec: rec, key: key, raw: raw, off: off, end: off + n, blkOff: -1}
		return r, nil
	}
}

// Stat returns the current version's metadata, including a tombstone (Deleted set, no error).
// A name never written is meta.ErrNotFound.
func (e *Engine) Stat(ctx context.Context, name meta.ObjectName) (meta.Object, error) {
	return e.stat(ctx, name, false)
}

// StatBrief is Stat without a long manifest's segment list: Summary instead of Manifest.
func (e *Engine) StatBrief(ctx context.Context, name meta.ObjectName) (meta.Object, error) {
	return e.stat(ctx, name, true)
}

func (e *Engine) stat(ctx context.Context, name meta.ObjectName, brief bool) (meta.Object, error) {
	if e.closed.Load() {
		return meta.Object{}, errClosed
	}
	if err := ctx.Err(); err != nil {
		return meta.Object{}, err
	}
	key := objectKey(nil, name)
	if e.isFlagged(key) {
		return meta.Object{}, e.errFlagged(name)
	}
	load := e.loadWhole
	if brief {
		load = e.load
	}
	rec, raw, err := e.readRecord(key, load)
	if err != nil {
		if errors.Is(err, meta.ErrCorrupt) {
			return meta.Object{}, e.corrupt(key, raw, rec, err.Error())
		}
		return meta.Object{}, err
	}
	if rec == nil {
		return meta.Object{}, fmt.Errorf("engine: %q: %w", name.Object, meta.ErrNotFound)
	}
	return rec.obj, nil
}

// DeleteOptions hook into a DELETE.
type DeleteOptions struct {
	// InBatch adds further writes (removing the listing entry) to the batch that commits the
	// tombstone. prev is the version being deleted.
	InBatch func(b *pebble.Batch, prev *meta.Object) error
	// If is checked against the current version in the commit (see PutOptions.If): the
	// expirer deletes only the version whose expiry it saw.
	If meta.Precondition
}

// Delete writes a tombstone at ts, removing the current version (meta.ErrConflict if it is
// newer than ts).
//
// As in Swift (which writes a .ts file even for a 404), a delete of a name that has no live
// version still records its tombstone, over an older tombstone or over nothing at all, and then
// reports meta.ErrNotFound: an older PUT arriving later (from a slow replica, or the
// replicator) must not bring the name back. InBatch runs with prev being the older tombstone,
// or nil. So a meta.ErrNotFound from Delete means the tombstone was committed.
func (e *Engine) Delete(ctx context.Context, name meta.ObjectName, ts meta.Timestamp, opts DeleteOptions) error {
	if e.closed.Load() {
		return errClosed
	}
	if err := checkName(name); err != nil {
		return err
	}
	if err := e.CheckDeleteSpace(); err != nil {
		return err
	}
	key := objectKey(nil, name)
	_, old, err := e.commit(ctx, key, ts, opts.If, false, func(*record) (*record, error) {
		return &record{obj: meta.Object{Timestamp: ts, Deleted: true}}, nil
	}, func(b *pebble.Batch, _, old *record) error {
		if opts.InBatch != nil {
			return opts.InBatch(b, old.object())
		}
		return nil
	}, nil)
	if err != nil {
		return err
	}
	if old != nil && old.isFile {
		e.removeData(old.file)
	}
	if old == nil || old.obj.Deleted {
		return fmt.Errorf("engine: %q: %w", name.Object, meta.ErrNotFound)
	}
	return nil
}

// UpdateMeta rewrites the current version's metadata at timestamp ts (Swift POST), keeping its
// bytes. update may change Headers, UserMeta, SysMeta and ContentType.
func (e *Engine) UpdateMeta(ctx context.Context, name meta.ObjectName, ts meta.Timestamp, update func(*meta.Object) error, opts PutOptions) (meta.Object, error) {
	if e.closed.Load() {
		return meta.Object{}, errClosed
	}
	if err := checkName(name); err != nil {
		return meta.Object{}, err
	}
	if err := e.CheckWriteSpace(); err != nil {
		return meta.Object{}, err
	}
	key := objectKey(nil, name)
	rec, _, err := e.commit(ctx, key, ts, opts.If, false, func(old *record) (*record, error) {
		if old == nil || old.obj.Deleted {
			return nil, fmt.Errorf("engine: %q: %w", name.Object, meta.ErrNotFound)
		}
		if old.corrupt || e.isFlagged(key) {
			return nil, e.errFlagged(name)
		}
		o := old.obj
		if err := update(&o); err != nil {
			return nil, fmt.Errorf("engine: update aborted: %w", err)
		}
		if opts.BeforeCommit != nil {
			if err := opts.BeforeCommit(&o); err != nil {
				return nil, fmt.Errorf("engine: update aborted: %w", err)
			}
		}
		// Only the metadata may change; the bytes, and what describes them, stay.
		n := *old
		n.obj.Timestamp = ts
		n.obj.ContentType, n.obj.Headers, n.obj.UserMeta, n.obj.SysMeta = o.ContentType, o.Headers, o.UserMeta, o.SysMeta
		return &n, nil
	}, func(b *pebble.Batch, rec, old *record) error {
		if opts.InBatch != nil {
			return opts.InBatch(b, &rec.obj, old.object())
		}
		return nil
	}, nil)
	if err != nil {
		return meta.Object{}, err
	}
	return rec.obj, nil
}

// object returns the version a record holds, nil for no record.
func (r *record) object() *meta.Object {
	if r == nil {
		return nil
	}
	return &r.obj
}
