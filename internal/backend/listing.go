package backend

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
)

// Container and account listings travel as Swift's JSON listings (format=json), with Cairn's
// exact timestamps and container settings in fields Swift's clients ignore.

// listedTimeLayout is Swift's last_modified in listings.
const listedTimeLayout = "2006-01-02T15:04:05.000000"

type objectRow struct {
	Subdir       string `json:"subdir,omitempty"`
	Name         string `json:"name,omitempty"`
	Hash         string `json:"hash,omitempty"`
	Bytes        int64  `json:"bytes"`
	ContentType  string `json:"content_type,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	Timestamp    string `json:"cairn_timestamp,omitempty"`
	Modified     string `json:"cairn_modified,omitempty"` // meta.ListEntry.Modified
}

type containerRow struct {
	Subdir       string            `json:"subdir,omitempty"`
	Name         string            `json:"name,omitempty"`
	Count        int64             `json:"count"`
	Bytes        int64             `json:"bytes"`
	LastModified string            `json:"last_modified,omitempty"`
	Created      string            `json:"cairn_created,omitempty"`
	Meta         map[string]string `json:"cairn_meta,omitempty"`
}

// listQuery writes list options as Swift's query parameters.
func listQuery(opts meta.ListOptions) string {
	q := url.Values{"format": {"json"}}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("prefix", opts.Prefix)
	set("delimiter", opts.Delimiter)
	set("marker", opts.Marker)
	set("end_marker", opts.EndMarker)
	if opts.Limit > 0 {
		q.Set("limit", strconv.Itoa(opts.Limit))
	}
	if opts.Reverse {
		q.Set("reverse", "true")
	}
	return q.Encode()
}

// maxListLimit is the longest page a node returns, as Swift's container servers cap it.
const maxListLimit = 10_000

func readListQuery(q url.Values) (meta.ListOptions, error) {
	opts := meta.ListOptions{
		Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"),
		Marker: q.Get("marker"), EndMarker: q.Get("end_marker"),
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > maxListLimit {
			return opts, fmt.Errorf("%w: limit %q", ErrBadRequest, v)
		}
		opts.Limit = n
	}
	switch q.Get("reverse") {
	case "", "false", "no", "0":
	default:
		opts.Reverse = true
	}
	return opts, nil
}

func listedTime(ts meta.Timestamp) string { return ts.Time().Format(listedTimeLayout) }

// encodeObjectListing writes a page as Swift does: objects and common prefixes in one list, in
// listing order (so that the last row is the next page's marker).
func encodeObjectListing(l meta.ObjectListing, reverse bool) ([]byte, error) {
	rows := make([]objectRow, 0, len(l.Objects)+len(l.CommonPrefixes))
	for _, e := range l.Objects {
		row := objectRow{Name: e.Name, Hash: e.ETag, Bytes: e.Size, ContentType: e.ContentType,
			LastModified: e.LastModified().Format(listedTimeLayout), Timestamp: FormatTimestamp(e.Timestamp)}
		if e.Modified != 0 {
			row.Modified = FormatTimestamp(e.Modified)
		}
		rows = append(rows, row)
	}
	for _, p := range l.CommonPrefixes {
		rows = append(rows, objectRow{Subdir: p})
	}
	sortRows(rows, func(r objectRow) string { return r.Name + r.Subdir }, reverse)
	return json.Marshal(rows)
}

func sortRows[T any](rows []T, key func(T) string, reverse bool) {
	slices.SortStableFunc(rows, func(a, b T) int {
		if reverse {
			return strings.Compare(key(b), key(a))
		}
		return strings.Compare(key(a), key(b))
	})
}

// decodeObjectListing reads a listing page; truncated says whether the node said more follow
// (Swift's servers do not say: a full page may have more).
func decodeObjectListing(b []byte, limit int, truncated string) (meta.ObjectListing, error) {
	var rows []objectRow
	if err := json.Unmarshal(b, &rows); err != nil {
		return meta.ObjectListing{}, fmt.Errorf("backend: object listing: %w", err)
	}
	var l meta.ObjectListing
	for _, r := range rows {
		if r.Subdir != "" {
			l.CommonPrefixes = append(l.CommonPrefixes, r.Subdir)
			l.NextMarker = r.Subdir
			continue
		}
		e := meta.ListEntry{Name: r.Name, Size: r.Bytes, ETag: r.Hash, ContentType: r.ContentType}
		if ts, err := ParseTimestamp(r.Timestamp); err == nil {
			e.Timestamp = ts
			if m, err := ParseTimestamp(r.Modified); err == nil && r.Modified != "" {
				e.Modified = m
			}
		} else if t, err := time.Parse(listedTimeLayout, r.LastModified); err == nil {
			e.Timestamp = meta.Timestamp(t.UnixNano())
		}
		l.Objects = append(l.Objects, e)
		l.NextMarker = r.Name
	}
	l.Truncated = isTruncated(truncated, len(rows), limit)
	if !l.Truncated {
		l.NextMarker = ""
	}
	return l, nil
}

func isTruncated(said string, rows, limit int) bool {
	if said != "" {
		return said == "true"
	}
	if limit <= 0 {
		limit = maxListLimit
	}
	return rows >= limit
}

func encodeContainerListing(l meta.ContainerListing, reverse bool) ([]byte, error) {
	rows := make([]containerRow, 0, len(l.Containers)+len(l.CommonPrefixes))
	for _, c := range l.Containers {
		rows = append(rows, containerRow{Name: c.Name, Count: c.ObjectCount, Bytes: c.BytesUsed,
			LastModified: listedTime(c.Created), Created: FormatTimestamp(c.Created), Meta: c.Meta})
	}
	for _, p := range l.CommonPrefixes {
		rows = append(rows, containerRow{Subdir: p})
	}
	sortRows(rows, func(r containerRow) string { return r.Name + r.Subdir }, reverse)
	return json.Marshal(rows)
}

func decodeContainerListing(b []byte, limit int, truncated string) (meta.ContainerListing, error) {
	var rows []containerRow
	if err := json.Unmarshal(b, &rows); err != nil {
		return meta.ContainerListing{}, fmt.Errorf("backend: container listing: %w", err)
	}
	var l meta.ContainerListing
	for _, r := range rows {
		if r.Subdir != "" {
			l.CommonPrefixes = append(l.CommonPrefixes, r.Subdir)
			l.NextMarker = r.Subdir
			continue
		}
		c := meta.Container{Name: r.Name, ObjectCount: r.Count, BytesUsed: r.Bytes, Meta: r.Meta}
		if ts, err := ParseTimestamp(r.Created); err == nil {
			c.Created = ts
		} else if t, err := time.Parse(listedTimeLayout, r.LastModified); err == nil {
			c.Created = meta.Timestamp(t.UnixNano())
		}
		l.Containers = append(l.Containers, c)
		l.NextMarker = r.Name
	}
	l.Truncated = isTruncated(truncated, len(rows), limit)
	if !l.Truncated {
		l.NextMarker = ""
	}
	return l, nil
}

// writeContainer puts a container's record and usage into headers (a container HEAD's answer).
func writeContainer(h http.Header, c meta.Container) {
	h.Set(hdrTimestamp, FormatTimestamp(c.Created))
	h.Set("X-Put-Timestamp", FormatTimestamp(c.Created))
	h.Set("X-Container-Object-Count", strconv.FormatInt(c.ObjectCount, 10))
	h.Set("X-Container-Bytes-Used", strconv.FormatInt(c.BytesUsed, 10))
	if v, ok := c.Meta[meta.ContainerPolicyKey]; ok {
		h.Set(hdrPolicyIndex, v)
	}
	putMeta(h, containerSysPrefix, withoutPolicy(c.Meta))
}

func readContainer(h http.Header, name string) (meta.Container, error) {
	c := meta.Container{Name: name, Meta: readMeta(h, containerSysPrefix)}
	ts := h.Get("X-Put-Timestamp")
	if ts == "" {
		ts = h.Get(hdrTimestamp)
	}
	var err error
	if c.Created, err = ParseTimestamp(ts); err != nil {
		return c, err
	}
	c.ObjectCount, _ = strconv.ParseInt(h.Get("X-Container-Object-Count"), 10, 64)
	c.BytesUsed, _ = strconv.ParseInt(h.Get("X-Container-Bytes-Used"), 10, 64)
	// Swift's container servers always name the policy; Cairn's, when the container has one.
	if v := h.Get(hdrPolicyIndex); v != "" {
		if c.Meta == nil {
			c.Meta = map[string]string{}
		}
		c.Meta[meta.ContainerPolicyKey] = v
	}
	return c, nil
}

func writeAccount(h http.Header, a meta.Account) {
	h.Set("X-Account-Container-Count", strconv.FormatInt(a.ContainerCount, 10))
	h.Set("X-Account-Object-Count", strconv.FormatInt(a.ObjectCount, 10))
	h.Set("X-Account-Bytes-Used", strconv.FormatInt(a.BytesUsed, 10))
	putMeta(h, accountSysPrefix, a.Meta)
}

func readAccount(h http.Header, name string) meta.Account {
	a := meta.Account{Name: name, Meta: readMeta(h, accountSysPrefix)}
	a.ContainerCount, _ = strconv.ParseInt(h.Get("X-Account-Container-Count"), 10, 64)
	a.ObjectCount, _ = strconv.ParseInt(h.Get("X-Account-Object-Count"), 10, 64)
	a.BytesUsed, _ = strconv.ParseInt(h.Get("X-Account-Bytes-Used"), 10, 64)
	return a
}
