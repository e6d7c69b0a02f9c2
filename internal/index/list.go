package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// DefaultLimit is the page size of a listing whose ListOptions.Limit is 0.
const DefaultLimit = meta.DefaultListLimit

// errSkipRow, from scan's object, skips the row: it is not listed and does not count.
var errSkipRow = errors.New("index: row skipped")

// scan walks one listing (the keys under base, each name being the rest of its key) with
// Swift's semantics, calling object for each name listed and prefix for each common prefix:
//
//   - forward: names > Marker, < EndMarker (if set), starting with Prefix, ascending;
//   - reverse: names < Marker (if set), > EndMarker (if set), starting with Prefix, descending;
//   - with Delimiter, a name containing it after Prefix is rolled up into the common prefix
//     ending with its first such delimiter; each common prefix counts once against Limit, and
//     a common prefix equal to Marker is not repeated (that is how the next page continues
//     after a page that ended with it);
//   - a key whose value live rejects (a listing tombstone, a deleted account row, a row that
//     fails its checksum) is skipped, and a common prefix is listed only for a live name under it.
//
// A common prefix is skipped with one seek past all its members, so a delimiter listing costs
// one seek per common prefix, however many names each holds (plus one step per dead key met
// before a live one: listings of names never deleted pay nothing for tombstones).
func scan(ctx context.Context, db *pebble.DB, base []byte, opts meta.ListOptions, live func(key, value []byte) bool,
	object func(key []byte, name string, value []byte) error, prefix func(p string),
) (truncated bool, next string, err error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	key := func(name string) []byte { return append(bytes.Clone(base), name...) }
	lower := key(opts.Prefix)
	upper := successor(lower) // nil: no bound
	if opts.Reverse {
		if opts.EndMarker != "" {
			if k := key(opts.EndMarker + "\x00"); bytes.Compare(k, lower) > 0 {
				lower = k
			}
		}
		if opts.Marker != "" {
			if k := key(opts.Marker); upper == nil || bytes.Compare(k, upper) < 0 {
				upper = k
			}
		}
	} else {
		if opts.Marker != "" {
			if k := key(opts.Marker + "\x00"); bytes.Compare(k, lower) > 0 {
				lower = k
			}
		}
		if opts.EndMarker != "" {
			if k := key(opts.EndMarker); upper == nil || bytes.Compare(k, upper) < 0 {
				upper = k
			}
		}
	}
	if upper != nil && bytes.Compare(lower, upper) >= 0 {
		return false, "", nil
	}
	it, err := db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return false, "", fmt.Errorf("index: listing: %w", err)
	}
	defer it.Close()

	valid := it.First()
	if opts.Reverse {
		valid = it.Last()
	}
	advance := func() bool {
		if opts.Reverse {
			return it.Prev()
		}
		return it.Next()
	}
	n := 0
	for steps := 1; valid; steps++ {
		if steps%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return false, "", err
			}
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return false, "", fmt.Errorf("index: listing: %w", err)
		}
		if !live(it.Key(), v) {
			valid = advance()
			continue
		}
		name := string(it.Key()[len(base):])
		if opts.Delimiter != "" {
			if i := strings.Index(name[len(opts.Prefix):], opts.Delimiter); i >= 0 {
				cp := name[:len(opts.Prefix)+i+len(opts.Delimiter)]
				if cp != opts.Marker {
					if n == limit {
						return true, next, nil
					}
					prefix(cp)
					next = cp
					n++
				}
				// Every name starting with cp sorts within [cp, successor(cp)).
				if opts.Reverse {
					valid = it.SeekLT(key(cp))
				} else if s := successor(key(cp)); s != nil {
					valid = it.SeekGE(s)
				} else {
					valid = false
				}
				continue
			}
		}
		if n == limit {
			return true, next, nil
		}
		if err := object(it.Key(), name, v); err != nil {
			if errors.Is(err, errSkipRow) {
				valid = advance()
				continue
			}
			return false, "", err
		}
		next = name
		n++
		valid = advance()
	}
	if err := it.Error(); err != nil {
		return false, "", fmt.Errorf("index: listing: %w", err)
	}
	return false, next, nil
}

// ListObjects returns a page of a container's listing.
func (ix *Index) ListObjects(ctx context.Context, account, container string, opts meta.ListOptions) (meta.ObjectListing, error) {
	var l meta.ObjectListing
	truncated, next, err := scan(ctx, ix.db, containerBase(account, container), opts,
		ix.liveEntry,
		func(k []byte, name string, v []byte) error {
			e, err := decodeEntry(k, name, v)
			if err != nil {
				ix.skipUnreadable(k, err)
				return errSkipRow
			}
			l.Objects = append(l.Objects, e)
			return nil
		},
		func(p string) { l.CommonPrefixes = append(l.CommonPrefixes, p) })
	if err != nil {
		return meta.ObjectListing{}, err
	}
	l.Truncated = truncated
	if truncated {
		l.NextMarker = next
	}
	return l, nil
}

// liveEntry reports whether a listing row lists an object. A row that fails its checksum, or
// does not decode, is skipped (and counted): a listing never shows what it says.
func (ix *Index) liveEntry(k, v []byte) bool {
	if isTombstone(v) {
		// A tombstone is skipped without reading it, so that containers with deletes list as
		// fast as any; whether it is intact matters to the writes that read it, which check.
		return false
	}
	kind, _, _, err := openRow(k, v)
	if err == nil && kind != valueVersion {
		err = fmt.Errorf("index: row %q of kind %d: %w: %w", k, kind, errBadValue, meta.ErrCorrupt)
	}
	if err != nil {
		ix.skipUnreadable(k, err)
		return false
	}
	return true
}
