package multipart

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/s3/s3core"
)

// An upload changes state only by a compare-and-swap on its marker (meta.Precondition
// IfTimestamp, decided in the engine's commit), so that of an Abort and a Complete racing on
// one upload exactly one wins:
//
//	open --Complete claims--> completing --object written--> (marker deleted)
//	open --Abort deletes--> (marker deleted)
//
// A Complete first claims the marker (rewrites it with sysUploadCompleting), then writes the
// object, then deletes the marker and the parts it did not use. An Abort deletes the marker
// only if it is still the open version it read; it refuses a claimed one with NoSuchUpload,
// since the upload is being completed. A claim whose Complete died (kill -9, or a failure that
// could not release it) is stale: its owner is this process but no Complete of it runs here,
// or it is older than claimTTL. A stale claim may be taken over by a Complete or deleted by an
// Abort.
//
// Parts are immutable: each UploadPart stores a new attempt under its own name,
//
//	<key>\x00<uploadID>\x00<part 00001>\x00<attempt>
//
// and the newest attempt of a number is the part (uploads made before attempts existed have
// one attempt named without the suffix). A part still streaming when its upload completes
// therefore lands beside the segment the object owns, never over it.

// sysUploadCompleting marks a claimed marker; its value names the claiming process.
const sysUploadCompleting = "mpu-completing"

// claimTTL is how long a claim by another process (or an earlier run of this one) holds before
// it counts as abandoned. A Complete holds its claim for one object write and its cleanup.
const claimTTL = 30 * time.Second

// claimWait is how long a Complete waits for another Complete of the same upload to finish
// before answering 503 SlowDown.
const claimWait = 5 * time.Second

// processID names this process in the claims it makes.
var processID = func() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

// errUploadCompleting: the upload is claimed by a Complete that is still running.
var errUploadCompleting = errors.New("s3: upload is being completed")

// claimStale reports whether a claimed marker may be taken over. The caller holds
// h.claimsMu.
func (h *Handler) claimStale(m *meta.Object) bool {
	owner := m.SysMeta[sysUploadCompleting]
	if strings.HasPrefix(owner, processID+"/") {
		return !h.Claims[owner]
	}
	return time.Since(m.LastModified()) > claimTTL
}

// busy reports whether m is claimed by a Complete that may still be running.
func (h *Handler) claimBusy(m *meta.Object) bool {
	if m.SysMeta[sysUploadCompleting] == "" {
		return false
	}
	h.ClaimsMu.Lock()
	defer h.ClaimsMu.Unlock()
	return !h.claimStale(m)
}

// newClaim registers a claim token of this process as running.
func (h *Handler) newClaim() string {
	h.ClaimsMu.Lock()
	defer h.ClaimsMu.Unlock()
	h.ClaimSeq++
	token := processID + "/" + strconv.FormatUint(h.ClaimSeq, 10)
	if h.Claims == nil {
		h.Claims = map[string]bool{}
	}
	h.Claims[token] = true
	return token
}

func (h *Handler) endClaim(token string) {
	h.ClaimsMu.Lock()
	defer h.ClaimsMu.Unlock()
	delete(h.Claims, token)
}

// claimUpload moves the upload from open (or a stale claim) to completing. It returns the
// claimed marker, errNoSuchUpload when the upload ended, or errUploadCompleting when another
// Complete holds it past claimWait. release undoes the claim when the Complete fails.
func (h *Handler) claimUpload(ctx context.Context, rq *s3core.Request, up *upload) (claimed meta.Object, release func(), err error) {
	name := up.markerName(rq)
	deadline := time.Now().Add(claimWait)
	m := up.marker
	for {
		if h.claimBusy(&m) {
			if err := pause(ctx, deadline); err != nil {
				return meta.Object{}, nil, err
			}
		} else {
			token := h.newClaim()
			next := markerCopy(m)
			next.SysMeta[sysUploadCompleting] = token
			claimed, err = h.Proxy.PutObject(ctx, name, next, nil, proxy.PutOptions{If: meta.Precondition{IfTimestamp: m.Timestamp}})
			if err == nil {
				release = func() {
					defer h.endClaim(token)
					// The object was not written: the upload is open again, unless an Abort or
					// another Complete took the stale claim meanwhile.
					back := markerCopy(claimed)
					delete(back.SysMeta, sysUploadCompleting)
					if _, err := h.Proxy.PutObject(context.WithoutCancel(ctx), name, back, nil, proxy.PutOptions{If: meta.Precondition{IfTimestamp: claimed.Timestamp}}); err != nil {
						h.Log.WarnContext(ctx, "s3 cannot release the claim of a failed completion; it goes stale", "upload", up.id, "err", err)
					}
				}
				return claimed, release, nil
			}
			h.endClaim(token)
			if !errors.Is(err, meta.ErrPreconditionFailed) {
				return meta.Object{}, nil, fmt.Errorf("claim upload %s: %w", up.id, err)
			}
		}
		// The marker changed under us: read it again.
		m, err = h.Proxy.HeadObject(ctx, name)
		if errors.Is(err, meta.ErrNotFound) {
			return meta.Object{}, nil, fmt.Errorf("upload %s ended: %w", up.id, s3core.ErrNoSuchUpload)
		}
		if err != nil {
			return meta.Object{}, nil, fmt.Errorf("upload %s: %w", up.id, err)
		}
	}
}

// finishCompletion ends a successful Complete: the marker goes, if the claim is still ours.
// It reports whether it was (if not, a later Complete took the claim over and tidies up).
func (h *Handler) finishCompletion(ctx context.Context, rq *s3core.Request, up *upload, claimed meta.Object) bool {
	name := up.markerName(rq)
	defer h.endClaim(claimed.SysMeta[sysUploadCompleting])
	err := h.Proxy.DeleteObjectIf(ctx, name, meta.Precondition{IfTimestamp: claimed.Timestamp})
	if err != nil && !errors.Is(err, meta.ErrNotFound) && !errors.Is(err, meta.ErrPreconditionFailed) {
		h.Log.WarnContext(ctx, "s3 cannot remove a completed upload's marker; its claim goes stale", "upload", up.id, "err", err)
	}
	return err == nil
}

// endUpload deletes an open (or stale claimed) upload's marker for Abort: errNoSuchUpload if
// it is gone or being completed.
func (h *Handler) endUpload(ctx context.Context, rq *s3core.Request, up *upload) error {
	name := up.markerName(rq)
	deadline := time.Now().Add(claimWait)
	m := up.marker
	for {
		if h.claimBusy(&m) {
			// A Complete runs: if it succeeds the upload is gone, if it fails it is open again
			// and this Abort goes on. One that outlasts the wait counts as done.
			if err := pause(ctx, deadline); errors.Is(err, errUploadCompleting) {
				return fmt.Errorf("upload %s is being completed: %w", up.id, s3core.ErrNoSuchUpload)
			} else if err != nil {
				return err
			}
		} else {
			err := h.Proxy.DeleteObjectIf(ctx, name, meta.Precondition{IfTimestamp: m.Timestamp})
			if err == nil {
				return nil
			}
			if !errors.Is(err, meta.ErrPreconditionFailed) && !errors.Is(err, meta.ErrNotFound) {
				return fmt.Errorf("abort upload %s: %w", up.id, err)
			}
		}
		var err error
		if m, err = h.Proxy.HeadObject(ctx, name); errors.Is(err, meta.ErrNotFound) {
			return fmt.Errorf("upload %s ended: %w", up.id, s3core.ErrNoSuchUpload)
		} else if err != nil {
			return fmt.Errorf("upload %s: %w", up.id, err)
		}
	}
}

// pause waits a moment before the marker is read again, errUploadCompleting past deadline.
func pause(ctx context.Context, deadline time.Time) error {
	if time.Now().After(deadline) {
		return errUploadCompleting
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(20 * time.Millisecond):
		return nil
	}
}

// markerCopy is a marker's metadata, ready to be written again.
func markerCopy(m meta.Object) meta.Object {
	sys := maps.Clone(m.SysMeta)
	if sys == nil {
		sys = map[string]string{}
	}
	return meta.Object{ContentType: m.ContentType, Headers: maps.Clone(m.Headers), UserMeta: maps.Clone(m.UserMeta), SysMeta: sys}
}

// NewPartAttemptName names a new attempt at part n.
func NewPartAttemptName(key, uploadID string, n int) string {
	var b [6]byte
	rand.Read(b[:])
	return PartName(key, uploadID, n) + "\x00" + hex.EncodeToString(b[:])
}

// parsePartNumberOf reads the part number from an entry of the upload's part listing (the name
// after partPrefix): "00001" (before attempts existed) or "00001\x00<attempt>".
func parsePartNumberOf(rest string) (int, bool) {
	num, _, _ := strings.Cut(rest, "\x00")
	if len(num) != 5 {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	return n, err == nil && n >= 1 && n <= s3core.MaxPartNumber
}

// afterPart is the listing marker that skips every attempt of part n.
func afterPart(key, uploadID string, n int) string { return PartName(key, uploadID, n) + "\x01" }

// partAttempts lists an upload's parts from after part `after`, calling fn with each number's
// newest attempt (the part) and the older ones (garbage). fn returns false to stop.
func (h *Handler) partAttempts(ctx context.Context, rq *s3core.Request, uploadID string, after int, fn func(n int, part meta.ListEntry, older []meta.ListEntry) bool) error {
	prefix := partPrefix(rq.Key, uploadID)
	opts := meta.ListOptions{Prefix: prefix}
	if after > 0 {
		opts.Marker = afterPart(rq.Key, uploadID, after)
	}
	cur, have := 0, false
	var best meta.ListEntry
	var older []meta.ListEntry
	flush := func() bool {
		if !have {
			return true
		}
		have = false
		o := older
		older = nil
		return fn(cur, best, o)
	}
	for {
		l, err := h.Proxy.ListObjects(ctx, rq.Account, s3core.UploadsContainer(rq.Bucket), opts)
		if err != nil {
			return fmt.Errorf("list parts of upload %s: %w", uploadID, err)
		}
		for _, e := range l.Objects {
			n, ok := parsePartNumberOf(strings.TrimPrefix(e.Name, prefix))
			if !ok {
				continue
			}
			switch {
			case have && n == cur && e.Timestamp > best.Timestamp:
				older = append(older, best)
				best = e
			case have && n == cur:
				older = append(older, e)
			default:
				if !flush() {
					return nil
				}
				cur, best, have = n, e, true
			}
		}
		if !l.Truncated {
			flush()
			return nil
		}
		opts.Marker = l.NextMarker
	}
}
