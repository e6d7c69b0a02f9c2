package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// Replication between Cairn's nodes: Swift's REPLICATE verb on a partition's path
// (/device/partition), with the partition power and the question in headers and JSON bodies.
// Only Cairn's nodes answer it; Swift's servers replicate among themselves.
const (
	methodReplicate = "REPLICATE"
	hdrPartPower    = "X-Backend-Cairn-Part-Power"
	hdrReplicate    = "X-Backend-Cairn-Replicate" // digests | versions | want, or a listing kind (replicate_listing.go)
	// maxReplicateBody bounds a REPLICATE request's body: a batch of versions.
	maxReplicateBody = 32 << 20
	// MaxVersionsPerRequest is the most versions one versions or want exchange carries.
	MaxVersionsPerRequest = 1000
)

// wireVersion is an ObjectVersion in JSON; names travel as bytes (base64) so that any name
// survives exactly.
type wireVersion struct {
	Account   []byte `json:"a"`
	Container []byte `json:"c"`
	Object    []byte `json:"o"`
	Timestamp int64  `json:"t"`
	Deleted   bool   `json:"d,omitempty"`
}

func toWireVersions(vs []nodeclient.ObjectVersion) []wireVersion {
	out := make([]wireVersion, len(vs))
	for i, v := range vs {
		out[i] = wireVersion{[]byte(v.Name.Account), []byte(v.Name.Container), []byte(v.Name.Object), int64(v.Timestamp), v.Deleted}
	}
	return out
}

func fromWireVersions(ws []wireVersion) []nodeclient.ObjectVersion {
	out := make([]nodeclient.ObjectVersion, len(ws))
	for i, w := range ws {
		out[i] = nodeclient.ObjectVersion{Name: meta.ObjectName{Account: string(w.Account), Container: string(w.Container), Object: string(w.Object)},
			Timestamp: meta.Timestamp(w.Timestamp), Deleted: w.Deleted}
	}
	return out
}

// partitionPath is the path of a REPLICATE request.
func partitionPath(device string, part uint32) string {
	return "/" + url.PathEscape(device) + "/" + strconv.FormatUint(uint64(part), 10)
}

func parsePartitionPath(escaped string) (string, uint32, error) {
	rest, _ := strings.CutPrefix(escaped, "/")
	dev, part, ok := strings.Cut(rest, "/")
	if !ok || strings.Contains(part, "/") {
		return "", 0, fmt.Errorf("%w: REPLICATE path %q is not /device/partition", ErrBadRequest, escaped)
	}
	d, err := url.PathUnescape(dev)
	if err != nil || d == "" || d == "." || d == ".." || strings.Contains(d, "/") {
		return "", 0, fmt.Errorf("%w: device %q", ErrBadRequest, dev)
	}
	n, err := strconv.ParseUint(part, 10, 32)
	if err != nil {
		return "", 0, fmt.Errorf("%w: partition %q", ErrBadRequest, part)
	}
	return d, uint32(n), nil
}

// replicate answers a REPLICATE request.
func (h *Handler) replicate(w http.ResponseWriter, r *http.Request) error {
	rep, ok := h.node.(nodeclient.Replication)
	if !ok {
		return fmt.Errorf("%w: this node does not replicate", ErrBadRequest)
	}
	dev, part, err := parsePartitionPath(r.URL.EscapedPath())
	if err != nil {
		return err
	}
	ctx := r.Context()
	body := io.LimitReader(r.Body, maxReplicateBody)
	var answer any
	switch r.Header.Get(hdrReplicate) {
	case "digests", "versions":
		power, err := strconv.ParseUint(r.Header.Get(hdrPartPower), 10, 8)
		if err != nil {
			return fmt.Errorf("%w: %s %q", ErrBadRequest, hdrPartPower, r.Header.Get(hdrPartPower))
		}
		if r.Header.Get(hdrReplicate) == "digests" {
			d, err := rep.PartitionDigests(ctx, dev, uint(power), part)
			if err != nil {
				return err
			}
			pairs := make([][2]uint64, 0, len(d))
			for s, v := range d {
				pairs = append(pairs, [2]uint64{uint64(s), v})
			}
			answer = pairs
			break
		}
		var suffixes []uint32
		if err := json.NewDecoder(body).Decode(&suffixes); err != nil {
			return fmt.Errorf("%w: suffixes: %v", ErrBadRequest, err)
		}
		vs, err := rep.PartitionVersions(ctx, dev, uint(power), part, suffixes)
		if err != nil {
			return err
		}
		answer = toWireVersions(vs)
	case "want":
		var ws []wireVersion
		if err := json.NewDecoder(body).Decode(&ws); err != nil {
			return fmt.Errorf("%w: versions: %v", ErrBadRequest, err)
		}
		if len(ws) > MaxVersionsPerRequest {
			return fmt.Errorf("%w: %d versions in one request, at most %d", ErrBadRequest, len(ws), MaxVersionsPerRequest)
		}
		want, err := rep.WantVersions(ctx, dev, fromWireVersions(ws))
		if err != nil {
			return err
		}
		answer = want
	default:
		if answer, err = h.replicateListing(ctx, r.Header.Get(hdrReplicate), dev, part, body); err != nil {
			return err
		}
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(answer)
}

var _ nodeclient.Replication = (*Client)(nil)

// replicateCall sends a REPLICATE request and decodes its JSON answer into out.
func (c *Client) replicateCall(ctx context.Context, device string, part uint32, partPower uint, kind string, in, out any) error {
	h := http.Header{}
	h.Set(hdrReplicate, kind)
	h.Set(hdrPartPower, strconv.FormatUint(uint64(partPower), 10))
	k := call{method: methodReplicate, raw: partitionPath(device, part), header: h, length: 0}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("backend: REPLICATE %s: %w", kind, err)
		}
		k.body, k.length = strings.NewReader(string(b)), int64(len(b))
	}
	resp, err := c.do(ctx, k)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return failed(resp, "REPLICATE "+kind)
	}
	defer drain(resp)
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxReplicateBody)).Decode(out); err != nil {
		return fmt.Errorf("backend: REPLICATE %s answer: %v: %w", kind, err, meta.ErrUnavailable)
	}
	return nil
}

// PartitionDigests asks the node for a partition's suffix digests.
func (c *Client) PartitionDigests(ctx context.Context, device string, partPower uint, part uint32) (map[uint32]uint64, error) {
	var pairs [][2]uint64
	if err := c.replicateCall(ctx, device, part, partPower, "digests", nil, &pairs); err != nil {
		return nil, err
	}
	out := make(map[uint32]uint64, len(pairs))
	for _, p := range pairs {
		out[uint32(p[0])] = p[1]
	}
	return out, nil
}

// PartitionVersions asks the node for the versions in some suffixes of a partition.
func (c *Client) PartitionVersions(ctx context.Context, device string, partPower uint, part uint32, suffixes []uint32) ([]nodeclient.ObjectVersion, error) {
	var ws []wireVersion
	if err := c.replicateCall(ctx, device, part, partPower, "versions", suffixes, &ws); err != nil {
		return nil, err
	}
	return fromWireVersions(ws), nil
}

// WantVersions asks the node which of some versions it would take.
func (c *Client) WantVersions(ctx context.Context, device string, versions []nodeclient.ObjectVersion) ([]int, error) {
	var want []int
	for start := 0; start < len(versions); start += MaxVersionsPerRequest {
		batch := versions[start:min(start+MaxVersionsPerRequest, len(versions))]
		var got []int
		if err := c.replicateCall(ctx, device, 0, 0, "want", toWireVersions(batch), &got); err != nil {
			return nil, err
		}
		for _, i := range got {
			if i < 0 || i >= len(batch) {
				return nil, fmt.Errorf("backend: REPLICATE want: index %d of %d: %w", i, len(batch), meta.ErrUnavailable)
			}
			want = append(want, start+i)
		}
	}
	return want, nil
}

// reconPath is where a node answers its status (Swift's storage servers have a recon
// middleware for the same purpose).
const reconPath = "/recon"

// recon answers GET /recon with the node's status.
func (h *Handler) recon(w http.ResponseWriter, r *http.Request) error {
	rep, ok := h.node.(nodeclient.Reporter)
	if !ok || r.Method != http.MethodGet {
		return fmt.Errorf("%w: no status here", ErrBadRequest)
	}
	st, err := rep.NodeStatus(r.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(st)
}

var _ nodeclient.Reporter = (*Client)(nil)

// NodeStatus asks the node for its status.
func (c *Client) NodeStatus(ctx context.Context) (nodeclient.NodeStatus, error) {
	var st nodeclient.NodeStatus
	resp, err := c.do(ctx, call{method: http.MethodGet, raw: reconPath})
	if err != nil {
		return st, err
	}
	if resp.StatusCode != http.StatusOK {
		return st, failed(resp, "GET "+reconPath)
	}
	defer drain(resp)
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&st); err != nil {
		return st, fmt.Errorf("backend: node status: %v: %w", err, meta.ErrUnavailable)
	}
	return st, nil
}
