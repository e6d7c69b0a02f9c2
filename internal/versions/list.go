package versions

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cairn-store/cairn/internal/meta"
)

// ListOptions select a page of a version listing, as S3's ListObjectVersions does: versions of
// the keys after KeyMarker, or after the version VersionMarker of KeyMarker.
type ListOptions struct {
	Prefix, Delimiter        string
	KeyMarker, VersionMarker string
	Limit                    int // versions and common prefixes; 0: 1,000
	// Reverse lists backwards: keys in descending order, each key's versions oldest first,
	// from before KeyMarker (or before its version VersionMarker), as Swift's reverse=true.
	Reverse bool
}

// Listed is one version in a listing.
type Listed struct {
	Key string
	ID  string
	// Latest is true for the current version: the one the object links to, the null version
	// in place, or a delete marker newer than anything else of the key.
	Latest       bool
	DeleteMarker bool
	Entry        meta.ListEntry // size, ETag, content type and timestamp of the version
}

// Listing is a page of versions, ordered by key, newest version first within a key.
type Listing struct {
	Versions       []Listed
	CommonPrefixes []string
	// Truncated says more follow; NextKeyMarker and NextVersionMarker continue after the
	// last version (NextVersionMarker is empty after a common prefix).
	Truncated                        bool
	NextKeyMarker, NextVersionMarker string
}

// listItem is a version or common prefix met in one of the two listings merged.
type listItem struct {
	key    string
	prefix bool
	null   bool // the null version, from the container itself
	ts     meta.Timestamp
	entry  meta.ListEntry
}

// source pages through one container's listing.
type source struct {
	fetch  func(marker string) (meta.ObjectListing, error)
	marker string
	items  []listItem
	done   bool
	// missingOK: a container that does not exist lists nothing (the versions container of a
	// container never versioned), rather than failing.
	missingOK bool
	// convert turns a page into items, or records what it learns (links) and returns none.
	convert func(meta.ObjectListing) []listItem
}

func (s *source) head() (*listItem, error) {
	for len(s.items) == 0 && !s.done {
		page, err := s.fetch(s.marker)
		if s.missingOK && errors.Is(err, meta.ErrNotFound) {
			s.done = true
			break
		}
		if err != nil {
			return nil, err
		}
		s.done = !page.Truncated
		s.marker = page.NextMarker
		s.items = s.convert(page) // may move the marker past a rolled-up prefix
	}
	if len(s.items) == 0 {
		return nil, nil
	}
	return &s.items[0], nil
}

func (s *source) pop() { s.items = s.items[1:] }

// nextKey is the key of the item after the head, "" when none (or a common prefix) follows.
func (s *source) nextKey() (string, error) {
	it, err := s.head()
	if err != nil || it == nil || it.prefix {
		return "", err
	}
	return it.key, nil
}

// before orders listing items: by key, then newest first, a common prefix by its string.
func before(a, b *listItem) bool {
	if c := cmp.Compare(a.key, b.key); c != 0 {
		return c < 0
	}
	return a.ts > b.ts
}

// List lists the versions of container's objects (of state st): the null versions in the
// container itself and the versions in its versions container, merged.
func (s *Store) List(ctx context.Context, st State, account, container string, opts ListOptions) (Listing, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = 1000
	}
	pageSize := min(limit+1, 10_000)
	// links maps a key to the version its link names: the current one.
	links := map[string]string{}
	rev := opts.Reverse
	order := func(a, b *listItem) bool {
		if rev {
			return before(b, a)
		}
		return before(a, b)
	}
	primary := &source{marker: opts.KeyMarker, fetch: func(marker string) (meta.ObjectListing, error) {
		return s.px.ListObjects(ctx, account, container, meta.ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter, Marker: marker, Limit: pageSize, Reverse: rev})
	}}
	primary.convert = func(page meta.ObjectListing) []listItem {
		out := make([]listItem, 0, len(page.Objects)+len(page.CommonPrefixes))
		for _, e := range page.Objects {
			if vobj, ok := ListedLink(e, container); ok {
				links[e.Name] = vobj
				continue
			}
			out = append(out, listItem{key: e.Name, null: true, ts: e.Timestamp, entry: e})
		}
		for _, p := range page.CommonPrefixes {
			out = append(out, listItem{key: p, prefix: true})
		}
		sortItems(out, order)
		return out
	}
	vmarker := ""
	switch {
	case opts.KeyMarker != "" && rev:
		vmarker = Prefix(opts.KeyMarker) // before every version of the key
	case opts.KeyMarker != "":
		vmarker = Prefix(opts.KeyMarker) + ":" // past every version of the key
	}
	if p, ok := rollUp(opts.KeyMarker, opts.Prefix, opts.Delimiter); ok && opts.VersionMarker == "" {
		// After a common prefix: past every key under it (as Swift and S3 continue).
		vmarker = pastPrefix(p, rev)
	}
	if opts.VersionMarker != "" && opts.KeyMarker != "" && rev {
		// Backwards from a version: the key's newer versions, then the keys before it (the
		// key's null version is left out).
		if opts.VersionMarker == Null {
			vmarker = Prefix(opts.KeyMarker)
		} else {
			at, err := ParseID(opts.VersionMarker)
			if err != nil {
				return Listing{}, err
			}
			vmarker = ObjectName(opts.KeyMarker, at)
		}
	} else if opts.VersionMarker != "" && opts.KeyMarker != "" {
		at, err := s.resumeWithin(ctx, st, account, container, opts, primary, links)
		if err != nil {
			return Listing{}, err
		}
		vmarker = ObjectName(opts.KeyMarker, at)
	}
	// The versions container is listed without the delimiter and rolled up here, on the key:
	// a delimiter that occurs only in a version's suffix (digits, '.') must not cut it.
	versions := &source{marker: vmarker, done: !st.Versioned(), missingOK: true, fetch: func(marker string) (meta.ObjectListing, error) {
		return s.px.ListObjects(ctx, account, st.Container, meta.ListOptions{Prefix: opts.Prefix, Marker: marker, Limit: pageSize, Reverse: rev})
	}}
	versions.convert = func(page meta.ObjectListing) []listItem {
		out := make([]listItem, 0, len(page.Objects))
		for i, e := range page.Objects {
			key, ts, ok := SplitObjectName(e.Name)
			if !ok {
				continue
			}
			if p, ok := rollUp(key, opts.Prefix, opts.Delimiter); ok {
				if n := len(out); n == 0 || !out[n-1].prefix || out[n-1].key != p {
					out = append(out, listItem{key: p, prefix: true})
				}
				if i == len(page.Objects)-1 && !versions.done {
					versions.marker = pastPrefix(p, rev)
				}
				continue
			}
			out = append(out, listItem{key: key, ts: ts, entry: e})
		}
		sortItems(out, order)
		return out
	}

	var l Listing
	lastKey, lastPrefix := "", ""
	if opts.VersionMarker != "" {
		// Resuming within a key: its newest version was on an earlier page.
		lastKey = opts.KeyMarker
	}
	seenLatest := map[string]bool{}
	for {
		a, err := primary.head()
		if err != nil {
			return Listing{}, fmt.Errorf("versions: list %q: %w", container, err)
		}
		b, err := versions.head()
		if err != nil {
			return Listing{}, fmt.Errorf("versions: list versions of %q: %w", container, err)
		}
		var it listItem
		switch {
		case a == nil && b == nil:
			return l, nil
		case b == nil || a != nil && order(a, b):
			it = *a
			primary.pop()
		default:
			it = *b
			versions.pop()
		}
		if it.prefix && it.key == lastPrefix {
			continue // both listings roll the same keys up
		}
		if len(l.Versions)+len(l.CommonPrefixes) == limit {
			l.Truncated = true
			return l, nil
		}
		if it.prefix {
			l.CommonPrefixes = append(l.CommonPrefixes, it.key)
			lastPrefix = it.key
			l.NextKeyMarker, l.NextVersionMarker = it.key, ""
			continue
		}
		v := Listed{Key: it.key, Entry: it.entry}
		v.Entry.Name = it.key
		if it.null {
			v.ID = Null
		} else {
			v.ID = ID(it.ts)
			v.DeleteMarker = it.entry.ContentType == DeleteMarkerType
		}
		newest := it.key != lastKey // the key's first version met is its newest
		if rev {
			// Backwards, the newest is the last met: nothing of the key follows it.
			ka, err := primary.nextKey()
			if err != nil {
				return Listing{}, err
			}
			kb, err := versions.nextKey()
			if err != nil {
				return Listing{}, err
			}
			newest = ka != it.key && kb != it.key
		}
		target, linked := links[it.key]
		switch {
		case seenLatest[it.key]:
		case linked:
			v.Latest = !it.null && target == ObjectName(it.key, it.ts)
		case newest:
			// No link: the newest of the key is current if it is the null version or a
			// delete marker (a version left without its link is not current).
			v.Latest = it.null || v.DeleteMarker
		}
		seenLatest[it.key] = seenLatest[it.key] || v.Latest
		lastKey = it.key
		l.Versions = append(l.Versions, v)
		l.NextKeyMarker, l.NextVersionMarker = it.key, v.ID
	}
}

// resumeWithin prepares a listing that resumes within the versions of KeyMarker, after the
// version VersionMarker: it returns that version's timestamp and puts KeyMarker's null version
// in front of the container's listing if it is older (the listing itself resumes after the
// key), and KeyMarker's link in links.
func (s *Store) resumeWithin(ctx context.Context, st State, account, container string, opts ListOptions, primary *source, links map[string]string) (meta.Timestamp, error) {
	cur, err := s.px.HeadObjectBrief(ctx, meta.ObjectName{Account: account, Container: container, Object: opts.KeyMarker})
	if err != nil && !errors.Is(err, meta.ErrNotFound) {
		return 0, err
	}
	exists := err == nil && !cur.Deleted
	var at meta.Timestamp
	if opts.VersionMarker == Null {
		if !exists || IsLink(&cur) {
			return 0, nil // past every version: nothing of the key is left to list
		}
		return cur.Timestamp, nil
	}
	at, err = ParseID(opts.VersionMarker)
	if err != nil {
		return 0, err
	}
	if exists {
		if vobj, _, ok := LinkedVersion(&cur); ok {
			links[opts.KeyMarker] = vobj
		} else if cur.Timestamp < at {
			e := cur.Listed(opts.KeyMarker)
			primary.items = append(primary.items, listItem{key: opts.KeyMarker, null: true, ts: cur.Timestamp, entry: e})
			// The container's own listing starts after the key: this stands in for it.
		}
	}
	return at, nil
}

// rollUp is the common prefix key belongs under in a listing by prefix and delimiter, as S3
// rolls keys up: key up to the first delimiter after prefix, the delimiter included.
func rollUp(key, prefix, delimiter string) (string, bool) {
	if delimiter == "" || !strings.HasPrefix(key, prefix) {
		return "", false
	}
	i := strings.Index(key[len(prefix):], delimiter)
	if i < 0 {
		return "", false
	}
	return key[:len(prefix)+i+len(delimiter)], true
}

// pastPrefix is the listing marker that continues after every name starting with p: forwards
// past the greatest character, backwards before p itself.
func pastPrefix(p string, reverse bool) string {
	if reverse {
		return p
	}
	return p + string(utf8.MaxRune)
}

// sortItems orders one page's items (objects and common prefixes come apart from a listing).
func sortItems(items []listItem, order func(a, b *listItem) bool) {
	slices.SortStableFunc(items, func(a, b listItem) int {
		switch {
		case order(&a, &b):
			return -1
		case order(&b, &a):
			return 1
		}
		return 0
	})
}

// ListedLink reads the version a container listing's entry links to, when it is a version
// link of container: its listing ETag names a target in container's versions container. vobj
// is the version's name there.
func ListedLink(e meta.ListEntry, container string) (vobj string, ok bool) {
	target, ok := ListingLinkTarget(e.ETag)
	if !ok {
		return "", false
	}
	c, obj, ok := cutTarget(target)
	if !ok || c != ContainerFor(container) {
		return "", false
	}
	if _, _, ok := SplitObjectName(obj); !ok {
		return "", false
	}
	return obj, true
}

// ListingLinkTarget reads a symlink's target ("container/object", each URL-quoted) from its
// listing ETag (meta.SymlinkListingETag).
func ListingLinkTarget(etag string) (string, bool) {
	_, rest, ok := strings.Cut(etag, "; symlink_target=")
	if !ok {
		return "", false
	}
	target, _, _ := strings.Cut(rest, ";")
	return target, target != ""
}

// cutTarget splits a link's target into its container and object, unquoted.
func cutTarget(target string) (container, object string, ok bool) {
	c, o, ok := strings.Cut(target, "/")
	if !ok {
		return "", "", false
	}
	c, err1 := url.PathUnescape(c)
	o, err2 := url.PathUnescape(o)
	return c, o, err1 == nil && err2 == nil
}

// AsCurrent is a container listing's entry as clients list it: a version link stands for its
// version, with the version's size, ETag and time.
func AsCurrent(e meta.ListEntry, container string) meta.ListEntry {
	vobj, ok := ListedLink(e, container)
	if !ok {
		return e
	}
	// The version's own time, as a HEAD through the link shows it (a link made current again
	// by a restore is newer than its version).
	_, e.Timestamp, _ = SplitObjectName(vobj)
	params := map[string]string{}
	for _, p := range strings.Split(e.ETag, ";")[1:] {
		if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok {
			params[k] = v
		}
	}
	e.ETag = params["symlink_target_etag"]
	if slo := params["slo_etag"]; slo != "" {
		e.ETag += "; slo_etag=" + slo // a static large object's, as its own listing shows it
	}
	e.Size, _ = strconv.ParseInt(params["symlink_target_bytes"], 10, 64)
	return e
}
