package proxy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
)

// The expiry queue. An object given an expiry (Swift's X-Delete-At) is recorded in a reserved
// account, ExpiringAccount, before the write that sets it is acknowledged; the expirer
// (internal/expirer) walks the queue in time order and removes what is due. As in Swift, the
// queue is kept in the listing index like any listing (replicated and durable), in containers
// that are time buckets of ExpiryBucketSeconds, holding one empty object per expiry named
// "<delete-at>-<account>/<container>/<object>" (delete-at in ten digits, so that names sort by
// time). An entry whose object has since changed (no expiry, or another one) is stale and
// harmless: the expirer checks the object before it deletes.
const ExpiringAccount = "\x00expiring"

// ExpiryBucketSeconds is the span of one queue container.
const ExpiryBucketSeconds = 3600

// ExpiryEntry is one queued expiry.
type ExpiryEntry struct {
	At   int64 // Unix seconds
	Name meta.ObjectName
}

// EntryName is the entry's object name in its bucket.
func (e ExpiryEntry) EntryName() string {
	return fmt.Sprintf("%010d-%s/%s/%s", e.At, e.Name.Account, e.Name.Container, e.Name.Object)
}

// ExpiryBucket is the name of the queue container holding expiries at at.
func ExpiryBucket(at int64) string {
	return fmt.Sprintf("%010d", at-at%ExpiryBucketSeconds)
}

// ParseExpiryEntry reads an entry name. Account and container names never hold '/', so the
// object name is everything after the second one.
func ParseExpiryEntry(s string) (ExpiryEntry, error) {
	at, rest, ok := strings.Cut(s, "-")
	if !ok || len(at) != 10 {
		return ExpiryEntry{}, fmt.Errorf("expiry entry %q: %w", s, meta.ErrInvalidName)
	}
	n, err := strconv.ParseInt(at, 10, 64)
	if err != nil || n < 0 {
		return ExpiryEntry{}, fmt.Errorf("expiry entry %q: %w", s, meta.ErrInvalidName)
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return ExpiryEntry{}, fmt.Errorf("expiry entry %q: %w", s, meta.ErrInvalidName)
	}
	return ExpiryEntry{At: n, Name: meta.ObjectName{Account: parts[0], Container: parts[1], Object: parts[2]}}, nil
}

// QueueExpiry records that name expires at at. Call it before the write that sets the expiry
// is acknowledged: an acknowledged expiry then always has its entry, even if the process dies
// right after.
func (p *Proxy) QueueExpiry(ctx context.Context, name meta.ObjectName, at int64) error {
	e := ExpiryEntry{At: at, Name: name}
	bucket := ExpiryBucket(at)
	put := func() error {
		_, err := p.PutObject(ctx, meta.ObjectName{Account: ExpiringAccount, Container: bucket, Object: e.EntryName()},
			meta.Object{Size: 0, ContentType: "application/x-expiry"}, strings.NewReader(""), PutOptions{})
		return err
	}
	err := put()
	if errors.Is(err, meta.ErrNotFound) {
		if cerr := p.CreateContainer(ctx, ExpiringAccount, bucket, nil); cerr != nil && !errors.Is(cerr, meta.ErrExists) {
			return fmt.Errorf("queue expiry: bucket %s: %w", bucket, cerr)
		}
		err = put()
	}
	if err != nil {
		return fmt.Errorf("queue expiry of %s/%s: %w", name.Container, name.Object, err)
	}
	return nil
}
