package backend

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/readlease"
)

// The read leases' messages (internal/readlease) between Cairn's nodes, and from proxies to
// them: the verb LEASE on a device's path (/device/0), with op=renew (the body a renewal, the
// answer a grant) or op=revoke (the body a revocation, the answer how long the holder's lease
// may run); readlease's encodings. The device says the storage policy (a device is in one
// policy's ring). Swift's servers do not know the verb.
const (
	methodLease = "LEASE"
	leaseType   = "application/x-cairn-lease"
	// maxLeaseBody bounds a LEASE body or answer: a renewal asking about many names.
	maxLeaseBody = 8 << 20
)

// lease answers a LEASE request.
func (h *Handler) lease(w http.ResponseWriter, r *http.Request) error {
	leases, ok := h.node.(nodeclient.Leases)
	if !ok {
		return nodeclient.ErrNoLeases
	}
	dev, _, err := parsePartitionPath(r.URL.EscapedPath())
	if err != nil {
		return err
	}
	q := r.URL.Query()
	body, err := io.ReadAll(io.LimitReader(r.Body, maxLeaseBody+1))
	if err != nil {
		return fmt.Errorf("%w: reading the message: %v", ErrBadRequest, err)
	}
	if len(body) > maxLeaseBody {
		return fmt.Errorf("%w: a lease message over %d bytes", ErrBadRequest, maxLeaseBody)
	}
	ctx := r.Context()
	var out []byte
	switch q.Get("op") {
	case "renew":
		rn, err := readlease.DecodeRenewal(body)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrBadRequest, err)
		}
		g, err := leases.RenewLease(ctx, dev, rn)
		if err != nil {
			return err
		}
		out = g.AppendTo(nil)
	case "revoke":
		rv, err := readlease.DecodeRevocation(body)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrBadRequest, err)
		}
		wait, err := leases.RevokeLease(ctx, dev, rv.Part, rv.Holder)
		if err != nil {
			return err
		}
		out = readlease.AppendWait(nil, wait)
	default:
		return fmt.Errorf("%w: LEASE op %q", ErrBadRequest, q.Get("op"))
	}
	w.Header().Set("Content-Type", leaseType)
	w.Header().Set("Content-Length", fmt.Sprint(len(out)))
	_, err = w.Write(out)
	return err
}

var _ nodeclient.Leases = (*Client)(nil)

// RenewLease asks the node's device to grant a renewal.
func (c *Client) RenewLease(ctx context.Context, device string, r readlease.Renewal) (readlease.Grant, error) {
	out, err := c.leaseCall(ctx, device, "renew", r.AppendTo(nil))
	if err != nil {
		return readlease.Grant{}, err
	}
	g, err := readlease.DecodeGrant(out)
	if err != nil {
		return readlease.Grant{}, fmt.Errorf("backend: LEASE answer: %v: %w", err, meta.ErrUnavailable)
	}
	return g, nil
}

// RevokeLease asks the node's device to revoke holder's lease for part.
func (c *Client) RevokeLease(ctx context.Context, device string, part uint32, holder string) (time.Duration, error) {
	out, err := c.leaseCall(ctx, device, "revoke", readlease.Revocation{Holder: holder, Part: part}.AppendTo(nil))
	if err != nil {
		return 0, err
	}
	wait, err := readlease.DecodeWait(out)
	if err != nil {
		return 0, fmt.Errorf("backend: LEASE answer: %v: %w", err, meta.ErrUnavailable)
	}
	return wait, nil
}

func (c *Client) leaseCall(ctx context.Context, device, op string, body []byte) ([]byte, error) {
	q := url.Values{"op": {op}}
	resp, err := c.do(ctx, call{method: methodLease, raw: partitionPath(device, 0), query: q.Encode(), body: bytes.NewReader(body), length: int64(len(body))})
	if err != nil {
		return nil, err
	}
	defer drain(resp)
	if resp.Header.Get(hdrNode) == "" {
		return nil, fmt.Errorf("backend: LEASE: status %d from a node that is not Cairn's: %w", resp.StatusCode, nodeclient.ErrNoLeases)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusBadRequest, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		// A node from before leases reads the verb as a malformed request.
		return nil, fmt.Errorf("%w: %w", failed(resp, "LEASE"), nodeclient.ErrNoLeases)
	default:
		return nil, failed(resp, "LEASE")
	}
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxLeaseBody+1))
	if err != nil || len(out) > maxLeaseBody {
		return nil, fmt.Errorf("backend: LEASE answer: %v: %w", err, meta.ErrUnavailable)
	}
	return out, nil
}
