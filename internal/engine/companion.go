package engine

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// Companion is a second object a PUT commits in the same batch as its own: both are durable
// after one WAL sync, or neither is. It has no bytes (an empty inline body): a versioned
// write's link to the version it writes is one (internal/versions), which otherwise costs a
// second commit, and a second sync round, after the version's.
type Companion struct {
	Name meta.ObjectName
	// Timestamp stamps the companion; it must be newer than its name's version for the
	// companion to replace it.
	Timestamp meta.Timestamp
	// Build returns the companion's metadata from the PUT's object as it will be committed
	// (Size, ETag and BeforeCommit's additions in place). Size and ETag are set to those of
	// no bytes.
	Build func(obj *meta.Object) (meta.Object, error)
	// If is checked against the version at Name in the commit: when it fails, neither
	// object is stored and the PUT returns meta.ErrPreconditionFailed.
	If meta.Precondition
	// Admit, if set, decides whether the companion may replace the version at Name (nil:
	// none, a tombstone included): an error leaves the companion out and the PUT's object
	// commits alone; Skipped is then that error.
	Admit func(prev *meta.Object) error
	// InBatch adds the companion's further writes (its listing entry) to the batch; prev is
	// the version it replaces (see PutOptions.InBatch).
	InBatch func(b *pebble.Batch, obj, prev *meta.Object) error

	// Set by Put on success:
	// Stored is the companion as committed (when Skipped is nil).
	Stored meta.Object
	// Previous is the version it replaced (nil: none or a tombstone).
	Previous *meta.Object
	// Skipped says why the companion was left out, nil when it committed: meta.ErrConflict
	// when a version as new or newer is at its name, or what Admit returned.
	Skipped error
}

var emptyETag = func() string { s := md5.Sum(nil); return hex.EncodeToString(s[:]) }()

// companionWrite returns the write that commits c beside the PUT's object obj, nil for no
// companion. The record is built from obj once the PUT's own is final.
func (e *Engine) companionWrite(c *Companion, obj *meta.Object) (*write, error) {
	if c == nil {
		return nil, nil
	}
	if err := checkName(c.Name); err != nil {
		return nil, err
	}
	if c.Timestamp <= 0 {
		return nil, fmt.Errorf("engine: companion without timestamp: %w", meta.ErrInvalidName)
	}
	o, err := c.Build(obj)
	if err != nil {
		return nil, fmt.Errorf("engine: companion: %w", err)
	}
	o.Timestamp, o.Size, o.ETag, o.Deleted, o.Manifest, o.Summary = c.Timestamp, 0, emptyETag, false, nil, nil
	w := &write{key: objectKey(nil, c.Name), ts: c.Timestamp, cond: c.If, rec: &record{obj: o, inline: []byte{}},
		inBatch: func(b *pebble.Batch, rec, old *record) error {
			if c.InBatch != nil {
				return c.InBatch(b, &rec.obj, old.object())
			}
			return nil
		},
	}
	if c.Admit != nil {
		w.admit = func(old *record) error {
			if old == nil || !old.corrupt && old.obj.Deleted {
				return c.Admit(nil)
			}
			// (A corrupt record is a version nobody can read: Admit sees one without
			// metadata.)
			return c.Admit(&old.obj)
		}
	}
	return w, nil
}

// companionDone records in c what its write became, once the batch committed, and removes the
// data file of the version it replaced.
func (e *Engine) companionDone(c *Companion, w *write) {
	if w.skipped != nil {
		c.Skipped = w.skipped
		return
	}
	c.Stored = w.rec.obj
	if w.old != nil && !w.old.corrupt && !w.old.obj.Deleted {
		p := w.old.obj
		c.Previous = &p
	}
	if w.old != nil && w.old.isFile {
		e.removeData(w.old.file)
	}
}
