package meta

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// ErrPreconditionFailed is returned by a write whose Precondition did not hold against the
// version it would replace (HTTP 412 on both APIs).
var ErrPreconditionFailed = errors.New("precondition failed")

// Precondition is a condition on the version a write replaces, checked by the storage engine
// inside the commit, with the name locked: a check made earlier (a HEAD, then the write) lets
// two racing writers both pass. It is plain data, so that it can cross the node protocol
// (Swift's object servers take If-None-Match: * and X-If-Delete-At the same way). The zero
// value holds always.
type Precondition struct {
	// IfNoneMatch: no live version may exist (If-None-Match: *).
	IfNoneMatch bool
	// IfMatch: a live version must exist and its served ETag be one of these (quotes removed),
	// or the list holds "*" (If-Match). Nil means no condition.
	IfMatch []string
	// IfDeleteAt: the live version must carry exactly this expiry (SysDeleteAt, Unix seconds;
	// Swift's X-If-Delete-At). The expirer deletes with it, so that an object rewritten after
	// the expirer looked at it is not deleted. 0 means no condition.
	IfDeleteAt int64
	// IfTimestamp: the current version (a tombstone counts as none) must have exactly this
	// timestamp: an atomic compare-and-swap on the version a reader saw. 0 means no condition.
	IfTimestamp Timestamp
	// ExpiredAt, when > 0, makes a version whose expiry (SysDeleteAt) is at or before it count as
	// absent, as Swift's object servers treat an expired object for If-None-Match.
	ExpiredAt int64
}

// IsZero reports whether p holds always.
func (p *Precondition) IsZero() bool {
	return p == nil || (!p.IfNoneMatch && p.IfMatch == nil && p.IfDeleteAt == 0 && p.IfTimestamp == 0)
}

// Check evaluates p against cur, the version a write would replace (nil or a tombstone when
// there is none). It returns nil or an error wrapping ErrPreconditionFailed.
func (p *Precondition) Check(cur *Object) error {
	if p.IsZero() {
		return nil
	}
	live := cur != nil && !cur.Deleted
	if live && p.ExpiredAt > 0 {
		if at, err := strconv.ParseInt(cur.SysMeta[SysDeleteAt], 10, 64); err == nil && at <= p.ExpiredAt {
			live = false
		}
	}
	if p.IfNoneMatch && live {
		return fmt.Errorf("if-none-match: an object exists: %w", ErrPreconditionFailed)
	}
	if p.IfMatch != nil {
		if !live {
			return fmt.Errorf("if-match: no object: %w", ErrPreconditionFailed)
		}
		if etag := cur.AsServed().ETag; !slices.Contains(p.IfMatch, "*") && !slices.Contains(p.IfMatch, etag) {
			return fmt.Errorf("if-match: ETag %q: %w", etag, ErrPreconditionFailed)
		}
	}
	if p.IfDeleteAt != 0 {
		if !live || cur.SysMeta[SysDeleteAt] != strconv.FormatInt(p.IfDeleteAt, 10) {
			return fmt.Errorf("if-delete-at %d: expiry changed: %w", p.IfDeleteAt, ErrPreconditionFailed)
		}
	}
	if p.IfTimestamp != 0 {
		if !live || cur.Timestamp != p.IfTimestamp {
			return fmt.Errorf("if-timestamp %d: version changed: %w", p.IfTimestamp, ErrPreconditionFailed)
		}
	}
	return nil
}
