package backend

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// An object without a content type travels with untypedContentType and hdrUntyped.
const (
	untypedContentType = "application/octet-stream"
	hdrUntyped         = objSysPrefix + "Untyped"
)

// emptyETag is the MD5 of no bytes: the ETag a node gives a manifest, which it stores empty.
const emptyETag = "d41d8cd98f00b204e9800998ecf8427e"

// writeObjectMeta puts an object's metadata into headers, as a PUT sends it and a GET or HEAD
// answers it: content type, content headers, user metadata (X-Object-Meta-*), system metadata
// (X-Object-Sysmeta-Cairn-*) and the timestamp.
func writeObjectMeta(h http.Header, o *meta.Object) {
	h.Set(hdrTimestamp, FormatTimestamp(o.Timestamp))
	if o.ContentType != "" {
		h.Set("Content-Type", o.ContentType)
	} else {
		// Swift's object servers refuse a PUT without a content type; Cairn's internal objects
		// (an upload's parts) have none.
		h.Set("Content-Type", untypedContentType)
		h.Set(hdrUntyped, "yes")
	}
	for _, k := range meta.StoredHeaders {
		if v := o.Headers[k]; v != "" {
			h.Set(k, v)
		}
	}
	for k, v := range o.UserMeta {
		h.Set(userMetaHeader(k), encodeValue(v))
	}
	putMeta(h, objSysPrefix+"M-", o.SysMeta)
}

// readObjectMeta is the inverse of writeObjectMeta. Size and ETag are the caller's to fill.
func readObjectMeta(h http.Header) (meta.Object, error) {
	var o meta.Object
	ts := h.Get(hdrBackendTS)
	if ts == "" {
		ts = h.Get(hdrTimestamp)
	}
	var err error
	if o.Timestamp, err = ParseTimestamp(ts); err != nil {
		return o, err
	}
	o.ContentType = h.Get("Content-Type")
	if h.Get(hdrUntyped) != "" && o.ContentType == untypedContentType {
		o.ContentType = ""
	}
	for _, k := range meta.StoredHeaders {
		if v := h.Get(k); v != "" {
			if o.Headers == nil {
				o.Headers = map[string]string{}
			}
			o.Headers[k] = v
		}
	}
	o.UserMeta = readMeta(h, objMetaPrefix)
	o.SysMeta = mergeMaps(readMeta(h, objSysPrefix+"M-"), readMeta(h, objPostedPrefix+"M-"))
	return o, nil
}

// manifestSummary is the value of hdrManifest for a manifest.
func manifestSummary(o *meta.Object) string {
	served := o.AsServed()
	return fmt.Sprintf("%d %d", o.SegmentCount(), served.Size)
}

// parseManifestSummary reads hdrManifest; ok is false for an object that is no manifest.
func parseManifestSummary(v string) (*meta.ManifestSummary, bool, error) {
	if v == "" {
		return nil, false, nil
	}
	n, size, ok := strings.Cut(v, " ")
	segs, err1 := strconv.Atoi(n)
	sz, err2 := strconv.ParseInt(size, 10, 64)
	if !ok || err1 != nil || err2 != nil || segs < 0 || sz < 0 {
		return nil, false, fmt.Errorf("%w: manifest summary %q", ErrBadRequest, v)
	}
	return &meta.ManifestSummary{Segments: segs, Size: sz}, true, nil
}

// encodeManifest is the stored body of a manifest on the wire: its segment list in JSON.
func encodeManifest(segs []meta.Segment) ([]byte, error) {
	if segs == nil {
		segs = []meta.Segment{}
	}
	b, err := json.Marshal(segs)
	if err != nil {
		return nil, fmt.Errorf("backend: encoding manifest: %w", err)
	}
	return b, nil
}

func decodeManifest(b []byte) ([]meta.Segment, error) {
	var segs []meta.Segment
	if err := json.Unmarshal(b, &segs); err != nil {
		return nil, fmt.Errorf("%w: manifest: %v", ErrBadRequest, err)
	}
	if segs == nil {
		segs = []meta.Segment{}
	}
	return segs, nil
}

// maxManifestBytes bounds a manifest's JSON on the wire (10,000 parts with 1 KiB names and
// their fields fit well within it).
const maxManifestBytes = 64 << 20

// writeCondition puts a write's precondition into headers: Swift's If-None-Match: * and
// X-If-Delete-At, and Cairn's extensions for the rest.
func writeCondition(h http.Header, p meta.Precondition) {
	if p.IfNoneMatch {
		h.Set("If-None-Match", "*")
	}
	if p.IfMatch != nil {
		h.Set(hdrIfMatch, encodeValue(strings.Join(p.IfMatch, ",")))
	}
	if p.IfDeleteAt != 0 {
		h.Set(hdrIfDeleteAt, strconv.FormatInt(p.IfDeleteAt, 10))
	}
	if p.IfTimestamp != 0 {
		h.Set(hdrIfTimestamp, FormatTimestamp(p.IfTimestamp))
	}
	if p.ExpiredAt != 0 {
		h.Set(hdrExpiredAt, strconv.FormatInt(p.ExpiredAt, 10))
	}
}

func readCondition(h http.Header) (meta.Precondition, error) {
	var p meta.Precondition
	var err error
	bad := func(what string) error { return fmt.Errorf("%w: %s", ErrBadRequest, what) }
	switch v := h.Get("If-None-Match"); v {
	case "":
	case "*":
		p.IfNoneMatch = true
	default:
		return p, bad("If-None-Match other than *")
	}
	if h.Values(hdrIfMatch) != nil {
		p.IfMatch = strings.Split(decodeValue(h.Get(hdrIfMatch)), ",")
	}
	if v := h.Get(hdrIfDeleteAt); v != "" {
		if p.IfDeleteAt, err = strconv.ParseInt(v, 10, 64); err != nil {
			return p, bad("X-If-Delete-At")
		}
	}
	if v := h.Get(hdrIfTimestamp); v != "" {
		if p.IfTimestamp, err = ParseTimestamp(v); err != nil {
			return p, err
		}
	}
	if v := h.Get(hdrExpiredAt); v != "" {
		if p.ExpiredAt, err = strconv.ParseInt(v, 10, 64); err != nil {
			return p, bad(hdrExpiredAt)
		}
	}
	return p, nil
}

// writeResult is the JSON answer of a Cairn node to an object write: the version stored and
// the one replaced (the proxy releases the segments of a replaced manifest).
type writeResult struct {
	Object   *meta.Object `json:"object,omitempty"`
	Previous *meta.Object `json:"previous,omitempty"`
	// Listed are the listing updates of the write (X-Container-Host, in its order) that hold
	// its entry (nodeclient.Listed); an older node sends none, and the proxy then sends the
	// entry itself where a quorum of the container's replicas needs it.
	Listed []int `json:"listed,omitempty"`

	// swift: the answer came from an OpenStack Swift server, which sends no result.
	swift bool
}

// listedOf says which of a write's listing updates hold its entry (writeResult.Listed).
func listedOf(upd []nodeclient.ContainerUpdate, l *nodeclient.Listed) []int {
	var out []int
	for i, u := range upd {
		if l.Has(u) {
			out = append(out, i)
		}
	}
	return out
}

// reportListed tells l which of a write's listing updates a node said hold its entry. A Swift
// object server does not say: it makes its container updates before it answers, as Cairn's
// nodes do, and keeps those that fail for its updater, and its listings keep Swift's own
// semantics. Its updates are taken as made, for a proxy must not write a Swift container's
// rows itself (a row carries the object's storage policy, which Swift's container servers
// reconcile).
func reportListed(upd []nodeclient.ContainerUpdate, res writeResult, l *nodeclient.Listed) {
	if res.swift {
		for _, u := range upd {
			l.Add(u)
		}
		return
	}
	for _, i := range res.Listed {
		if i >= 0 && i < len(upd) {
			l.Add(upd[i])
		}
	}
}

// hdrListingOverride starts the system metadata with which a Swift object server lists an
// object otherwise than by its stored body (Swift's container update overrides: its SLO
// middleware lists a manifest so). It keeps them with the object, for the listing updates of
// later POSTs too; Cairn's nodes list every object as meta.Object.Listed has it and ignore
// them.
const hdrListingOverride = "X-Object-Sysmeta-Container-Update-Override-"

// writeListingOverride asks a Swift object server to list an object as Cairn lists it (size
// and ETag as served, or its listing ETag) where that differs from its stored body, bodySize
// bytes with MD5 bodyETag: a manifest, or an object with meta.SysListingETag.
func writeListingOverride(h http.Header, o *meta.Object, bodySize int64, bodyETag string) {
	e := o.Listed("")
	if e.Size != bodySize {
		h.Set(hdrListingOverride+"Size", strconv.FormatInt(e.Size, 10))
	}
	if e.ETag != bodyETag {
		h.Set(hdrListingOverride+"Etag", e.ETag)
	}
}
