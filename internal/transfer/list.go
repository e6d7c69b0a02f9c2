package transfer

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/cairn-store/cairn/internal/objclient"
)

// Entry is one line of a listing: an object, or a common prefix ("dir/") when the listing is
// not recursive.
type Entry struct {
	Prefix string               // set for a common prefix; Object is then zero
	Object objclient.ObjectInfo // set for an object
}

// Name is the entry's key or prefix.
func (e Entry) Name() string {
	if e.Prefix != "" {
		return e.Prefix
	}
	return e.Object.Key
}

// List calls visit for every object under prefix in bucket, in name order, page by page.
// Unless recursive, names are cut at the next "/" after the prefix and each such common
// prefix is visited once, as a directory listing would show it.
func List(ctx context.Context, c objclient.Client, bucket, prefix string, recursive bool, visit func(Entry) error) error {
	opts := objclient.ListOptions{Prefix: prefix}
	if !recursive {
		opts.Delimiter = "/"
	}
	for {
		page, err := c.List(ctx, bucket, opts)
		if objclient.IsNotFound(err) {
			return &NotFoundError{Bucket: bucket, Err: err}
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", bucket, asInterruption(err))
		}
		for _, e := range mergePage(page) {
			if err := visit(e); err != nil {
				return err
			}
		}
		if !page.Truncated {
			return nil
		}
		if page.Next == "" || page.Next <= opts.Marker {
			// A store that hands back the same page forever must not hang the listing.
			return fmt.Errorf("listing %s: the store's page after %q does not move on", bucket, opts.Marker)
		}
		opts.Marker = page.Next
	}
}

// mergePage interleaves a page's objects and common prefixes in name order: stores return
// them as two sorted lists.
func mergePage(p objclient.ListPage) []Entry {
	out := make([]Entry, 0, len(p.Objects)+len(p.Prefixes))
	i, k := 0, 0
	for i < len(p.Objects) || k < len(p.Prefixes) {
		if k == len(p.Prefixes) || (i < len(p.Objects) && p.Objects[i].Key < p.Prefixes[k]) {
			out = append(out, Entry{Object: p.Objects[i]})
			i++
		} else {
			out = append(out, Entry{Prefix: p.Prefixes[k]})
			k++
		}
	}
	return out
}

// RemoveOptions say what Remove deletes.
type RemoveOptions struct {
	// Recursive removes key itself (if it exists) and every object under key+"/"; a key that
	// is empty or ends in "/" is a prefix, and everything under it goes. Without it, key must
	// name an existing object.
	Recursive bool
	// Concurrency is the number of deletes in flight (default DefaultConcurrency).
	Concurrency int
	// Removed, if set, is called after each deletion, one call at a time.
	Removed func(key string)
}

// Remove deletes bucket/key, or with opts.Recursive everything under it, and returns how many
// objects it deleted. A missing object is a NotFoundError unless opts.Recursive. It deletes
// one object per request (S3 DeleteObject or a Swift DELETE), which every store understands.
func Remove(ctx context.Context, c objclient.Client, bucket, key string, opts RemoveOptions) (int64, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if !opts.Recursive {
		if _, err := head(ctx, c, bucket, key); err != nil {
			return 0, err
		}
		if err := c.Delete(ctx, bucket, key); err != nil {
			return 0, fmt.Errorf("removing %s/%s: %w", bucket, key, asInterruption(err))
		}
		if opts.Removed != nil {
			opts.Removed(key)
		}
		return 1, nil
	}

	prefix := key
	if key != "" && !strings.HasSuffix(key, "/") {
		// "dir" means the object dir and the directory dir/, not also "dirt".
		prefix = key + "/"
		if _, err := head(ctx, c, bucket, key); err == nil {
			n, err := Remove(ctx, c, bucket, key, RemoveOptions{Removed: opts.Removed})
			if err != nil {
				return n, err
			}
			m, err := removePrefix(ctx, c, bucket, prefix, opts)
			return n + m, err
		} else if !objclient.IsNotFound(err) {
			return 0, err
		}
	}
	return removePrefix(ctx, c, bucket, prefix, opts)
}

// removePrefix deletes every object under prefix, page by page, opts.Concurrency at a time.
func removePrefix(ctx context.Context, c objclient.Client, bucket, prefix string, opts RemoveOptions) (int64, error) {
	var (
		removed int64
		mu      sync.Mutex // removed and opts.Removed
	)
	var keys []string // one page, deleted before the next is listed
	flush := func() error {
		err := forEach(ctx, opts.Concurrency, keys, func(ctx context.Context, k string) error {
			if err := c.Delete(ctx, bucket, k); err != nil {
				return fmt.Errorf("removing %s/%s: %w", bucket, k, asInterruption(err))
			}
			mu.Lock()
			defer mu.Unlock()
			removed++
			if opts.Removed != nil {
				opts.Removed(k)
			}
			return nil
		})
		keys = keys[:0]
		return err
	}
	err := List(ctx, c, bucket, prefix, true, func(e Entry) error {
		keys = append(keys, e.Object.Key)
		if len(keys) < 1000 {
			return nil
		}
		return flush()
	})
	if err == nil {
		err = flush()
	}
	return removed, err
}
