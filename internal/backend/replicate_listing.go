package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// Replication of listings between Cairn's nodes: more kinds of the REPLICATE verb
// (hdrReplicate), each a JSON question and answer about the listings of the path's device. Every
// string that names something or came from a client (names, ETags, content types, metadata)
// travels as bytes (base64), so that it survives exactly.
const (
	replListingDigests = "listing-digests" // names → digests
	replListingBuckets = "listing-buckets" // name, bits → bucket digests
	replListingWant    = "listing-want"    // name, row versions → indexes wanted
	replListingMerge   = "listing-merge"   // name, rows → nothing
	replContainerMerge = "container-merge" // name, record, report → live
	// MaxRowsPerRequest is the most names or rows one listing exchange carries.
	MaxRowsPerRequest = 1000
)

type wireListingName struct {
	Account   []byte `json:"a"`
	Container []byte `json:"c,omitempty"`
}

func toWireListingName(l nodeclient.Listing) wireListingName {
	return wireListingName{[]byte(l.Account), []byte(l.Container)}
}

func (w wireListingName) listing() nodeclient.Listing {
	return nodeclient.Listing{Account: string(w.Account), Container: string(w.Container)}
}

type wireListingDigest struct {
	Record  uint64 `json:"r,omitempty"`
	Deleted bool   `json:"d,omitempty"`
	Rows    uint64 `json:"h,omitempty"`
	Count   int    `json:"n,omitempty"`
}

// wireRow is a nodeclient.ListingRow: an object row (an entry or, with Deleted, a listing
// tombstone), or with Account a container's row of an account (Timestamp its put timestamp).
type wireRow struct {
	Name            []byte `json:"n"`
	Timestamp       int64  `json:"t,omitempty"`
	Deleted         bool   `json:"d,omitempty"`
	Size            int64  `json:"s,omitempty"`
	ETag            []byte `json:"e,omitempty"`
	ContentType     []byte `json:"ct,omitempty"`
	Modified        int64  `json:"m,omitempty"` // meta.ListEntry.Modified
	Account         bool   `json:"k,omitempty"`
	DeleteTimestamp int64  `json:"x,omitempty"`
	Objects         int64  `json:"o,omitempty"`
	Bytes           int64  `json:"b,omitempty"`
}

func toWireRows(rows []nodeclient.ListingRow) []wireRow {
	out := make([]wireRow, len(rows))
	for i, r := range rows {
		if c := r.Container; c.Name != "" {
			out[i] = wireRow{Name: []byte(c.Name), Timestamp: int64(c.PutTimestamp), Account: true,
				DeleteTimestamp: int64(c.DeleteTimestamp), Objects: c.ObjectCount, Bytes: c.BytesUsed}
			continue
		}
		e := r.Entry
		out[i] = wireRow{Name: []byte(e.Name), Timestamp: int64(e.Timestamp), Deleted: r.Deleted, Size: e.Size,
			ETag: []byte(e.ETag), ContentType: []byte(e.ContentType), Modified: int64(e.Modified)}
	}
	return out
}

func fromWireRows(ws []wireRow) []nodeclient.ListingRow {
	out := make([]nodeclient.ListingRow, len(ws))
	for i, w := range ws {
		if w.Account {
			out[i].Container = meta.ContainerRow{Name: string(w.Name), PutTimestamp: meta.Timestamp(w.Timestamp),
				DeleteTimestamp: meta.Timestamp(w.DeleteTimestamp), ObjectCount: w.Objects, BytesUsed: w.Bytes}
			continue
		}
		out[i] = nodeclient.ListingRow{Deleted: w.Deleted, Entry: meta.ListEntry{Name: string(w.Name), Timestamp: meta.Timestamp(w.Timestamp),
			Size: w.Size, ETag: string(w.ETag), ContentType: string(w.ContentType), Modified: meta.Timestamp(w.Modified)}}
	}
	return out
}

type wireMetaValue struct {
	Key       []byte `json:"k"`
	Value     []byte `json:"v,omitempty"`
	Timestamp int64  `json:"t"`
}

type wireRecord struct {
	Created int64           `json:"c"`
	Deleted int64           `json:"d,omitempty"`
	Meta    []wireMetaValue `json:"m,omitempty"`
}

type listingRequest struct {
	Names  []wireListingName  `json:"names,omitempty"`
	Name   *wireListingName   `json:"name,omitempty"`
	Bits   uint               `json:"bits,omitempty"`
	Rows   []wireRow          `json:"rows,omitempty"`
	Record *wireRecord        `json:"record,omitempty"`
	Report *wireAccountTarget `json:"report,omitempty"`
}

type wireAccountTarget struct {
	Node   []byte `json:"n"`
	Device []byte `json:"d"`
	Part   uint32 `json:"p"`
}

// replicateListing answers the listing kinds of REPLICATE.
func (h *Handler) replicateListing(ctx context.Context, kind, dev string, part uint32, body io.Reader) (any, error) {
	rep, ok := h.node.(nodeclient.ListingReplication)
	if !ok {
		return nil, fmt.Errorf("%w: this node does not replicate listings", ErrBadRequest)
	}
	switch kind {
	case replListingDigests, replListingBuckets, replListingWant, replListingMerge, replContainerMerge:
	default:
		return nil, fmt.Errorf("%w: %s %q", ErrBadRequest, hdrReplicate, kind)
	}
	var req listingRequest
	if err := json.NewDecoder(body).Decode(&req); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadRequest, kind, err)
	}
	if len(req.Names) > MaxRowsPerRequest || len(req.Rows) > MaxRowsPerRequest {
		return nil, fmt.Errorf("%w: more than %d names or rows in one request", ErrBadRequest, MaxRowsPerRequest)
	}
	if kind != replListingDigests && req.Name == nil {
		return nil, fmt.Errorf("%w: %s without a listing", ErrBadRequest, kind)
	}
	switch kind {
	case replListingDigests:
		names := make([]nodeclient.Listing, len(req.Names))
		for i, n := range req.Names {
			names[i] = n.listing()
		}
		ds, err := rep.ListingDigests(ctx, dev, names)
		if err != nil {
			return nil, err
		}
		out := make([]wireListingDigest, len(ds))
		for i, d := range ds {
			out[i] = wireListingDigest(d)
		}
		return out, nil
	case replListingBuckets:
		bs, err := rep.ListingBuckets(ctx, dev, req.Name.listing(), req.Bits)
		if err != nil {
			return nil, err
		}
		pairs := make([][2]uint64, 0, len(bs))
		for b, d := range bs {
			pairs = append(pairs, [2]uint64{uint64(b), d})
		}
		return pairs, nil
	case replListingWant:
		return rep.WantRows(ctx, dev, req.Name.listing(), fromWireRows(req.Rows))
	case replListingMerge:
		return struct{}{}, rep.MergeRows(ctx, dev, part, req.Name.listing(), fromWireRows(req.Rows))
	}
	if req.Record == nil {
		return nil, fmt.Errorf("%w: %s without a record", ErrBadRequest, kind)
	}
	rec := nodeclient.ContainerRecord{Created: meta.Timestamp(req.Record.Created), Deleted: meta.Timestamp(req.Record.Deleted), Meta: map[string]nodeclient.MetaValue{}}
	for _, m := range req.Record.Meta {
		rec.Meta[string(m.Key)] = nodeclient.MetaValue{Value: string(m.Value), Timestamp: meta.Timestamp(m.Timestamp)}
	}
	var report *nodeclient.AccountUpdate
	if req.Report != nil {
		report = &nodeclient.AccountUpdate{Node: string(req.Report.Node), Device: string(req.Report.Device), Part: req.Report.Part}
	}
	name := req.Name.listing()
	live, err := rep.MergeContainer(ctx, dev, part, name.Account, name.Container, rec, report)
	return map[string]bool{"live": live}, err
}

var _ nodeclient.ListingReplication = (*Client)(nil)

// ListingDigests asks the node for the digests of listings.
func (c *Client) ListingDigests(ctx context.Context, device string, names []nodeclient.Listing) ([]nodeclient.ListingDigest, error) {
	out := make([]nodeclient.ListingDigest, 0, len(names))
	for start := 0; start < len(names); start += MaxRowsPerRequest {
		batch := names[start:min(start+MaxRowsPerRequest, len(names))]
		req := listingRequest{Names: make([]wireListingName, len(batch))}
		for i, n := range batch {
			req.Names[i] = toWireListingName(n)
		}
		var ds []wireListingDigest
		if err := c.replicateCall(ctx, device, 0, 0, replListingDigests, req, &ds); err != nil {
			return nil, err
		}
		if len(ds) != len(batch) {
			return nil, fmt.Errorf("backend: REPLICATE %s: %d digests for %d listings: %w", replListingDigests, len(ds), len(batch), meta.ErrUnavailable)
		}
		for _, d := range ds {
			out = append(out, nodeclient.ListingDigest(d))
		}
	}
	return out, nil
}

// ListingBuckets asks the node for the digests of a listing's rows by bucket.
func (c *Client) ListingBuckets(ctx context.Context, device string, name nodeclient.Listing, bits uint) (map[uint32]uint64, error) {
	w := toWireListingName(name)
	var pairs [][2]uint64
	if err := c.replicateCall(ctx, device, 0, 0, replListingBuckets, listingRequest{Name: &w, Bits: bits}, &pairs); err != nil {
		return nil, err
	}
	out := make(map[uint32]uint64, len(pairs))
	for _, p := range pairs {
		out[uint32(p[0])] = p[1]
	}
	return out, nil
}

// WantRows asks the node which of some row versions it would take.
func (c *Client) WantRows(ctx context.Context, device string, name nodeclient.Listing, versions []nodeclient.ListingRow) ([]int, error) {
	w := toWireListingName(name)
	var want []int
	for start := 0; start < len(versions); start += MaxRowsPerRequest {
		batch := versions[start:min(start+MaxRowsPerRequest, len(versions))]
		var got []int
		if err := c.replicateCall(ctx, device, 0, 0, replListingWant, listingRequest{Name: &w, Rows: toWireRows(batch)}, &got); err != nil {
			return nil, err
		}
		for _, i := range got {
			if i < 0 || i >= len(batch) {
				return nil, fmt.Errorf("backend: REPLICATE %s: index %d of %d: %w", replListingWant, i, len(batch), meta.ErrUnavailable)
			}
			want = append(want, start+i)
		}
	}
	return want, nil
}

// MergeRows sends rows for the node to merge into a listing.
func (c *Client) MergeRows(ctx context.Context, device string, part uint32, name nodeclient.Listing, rows []nodeclient.ListingRow) error {
	w := toWireListingName(name)
	for start := 0; start < len(rows); start += MaxRowsPerRequest {
		batch := rows[start:min(start+MaxRowsPerRequest, len(rows))]
		var ignored struct{}
		if err := c.replicateCall(ctx, device, part, 0, replListingMerge, listingRequest{Name: &w, Rows: toWireRows(batch)}, &ignored); err != nil {
			return err
		}
	}
	return nil
}

// MergeContainer sends a container's record for the node to merge.
func (c *Client) MergeContainer(ctx context.Context, device string, part uint32, account, container string, rec nodeclient.ContainerRecord, report *nodeclient.AccountUpdate) (bool, error) {
	w := toWireListingName(nodeclient.Listing{Account: account, Container: container})
	req := listingRequest{Name: &w, Record: &wireRecord{Created: int64(rec.Created), Deleted: int64(rec.Deleted)}}
	for k, v := range rec.Meta {
		req.Record.Meta = append(req.Record.Meta, wireMetaValue{Key: []byte(k), Value: []byte(v.Value), Timestamp: int64(v.Timestamp)})
	}
	if report != nil {
		req.Report = &wireAccountTarget{Node: []byte(report.Node), Device: []byte(report.Device), Part: report.Part}
	}
	var answer struct {
		Live bool `json:"live"`
	}
	if err := c.replicateCall(ctx, device, part, 0, replContainerMerge, req, &answer); err != nil {
		return false, err
	}
	return answer.Live, nil
}
