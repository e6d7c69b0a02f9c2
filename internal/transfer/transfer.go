// Package transfer owns moving files to and from a store: parallel parts up, parallel ranges
// down, resuming an interrupted transfer, throttling, and progress. It speaks to the store only
// through objclient.Client, so the same code moves files over S3 (multipart uploads) and Swift
// (static large objects), and what `cairn bench` measures is what `cairn put/get` does.
package transfer

import (
	"errors"
	"fmt"
	"time"

	"github.com/cairn-store/cairn/internal/objclient"
)

// Defaults for Options left zero.
const (
	DefaultPartSize     = 16 << 20
	DefaultThreshold    = 64 << 20
	DefaultConcurrency  = 4
	DefaultStallTimeout = 2 * time.Minute

	// MaxParts is S3's limit on the parts of one upload; the part size is raised to stay
	// under it.
	MaxParts = 10_000
	// MinS3PartSize is S3's minimum for every part but the last.
	MinS3PartSize = 5 << 20
	// MaxPartSize is S3's maximum part size.
	MaxPartSize = 5 << 30
)

// ProgressFunc receives the bytes done out of total. Upload and Download call it from one
// goroutine at a time, at most ten times a second, and once more at the end, so that it can
// draw without locking or rate limiting of its own. done counts bytes an interrupted run had
// already moved as soon as they are known to be there.
type ProgressFunc func(done, total int64)

// Options are shared by uploads and downloads.
type Options struct {
	// PartSize is the size of an upload part or a download range (default 16 MiB). Uploads
	// raise it to keep within MaxParts, and to MinS3PartSize over S3. A resumed transfer keeps
	// the part size it started with.
	PartSize int64
	// Threshold is the size from which a file moves in parts (default 64 MiB); below it, one
	// request moves it whole.
	Threshold int64
	// Concurrency is the number of parts or ranges in flight (default 4).
	Concurrency int
	// RateLimit caps the bytes per second of all streams together; 0 is no limit.
	RateLimit int64
	// NoResume starts over, discarding what an interrupted earlier run left behind. The run
	// itself still records its state, so that it can be resumed in turn.
	NoResume bool
	// Progress, if set, is told how far the transfer is.
	Progress ProgressFunc
	// StallTimeout abandons (and retries) a request that has moved no byte for this long
	// (default 2 minutes). It replaces a bound on the whole request, which a throttled or
	// merely slow link would exceed without anything being wrong.
	StallTimeout time.Duration
}

func (o *Options) setDefaults() error {
	if o.PartSize == 0 {
		o.PartSize = DefaultPartSize
	}
	if o.Threshold == 0 {
		o.Threshold = DefaultThreshold
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.StallTimeout == 0 {
		o.StallTimeout = DefaultStallTimeout
	}
	switch {
	case o.PartSize < 0:
		return fmt.Errorf("part size %d < 0", o.PartSize)
	case o.Threshold < 0:
		return fmt.Errorf("threshold %d < 0", o.Threshold)
	case o.Concurrency < 0:
		return fmt.Errorf("concurrency %d < 1", o.Concurrency)
	case o.RateLimit < 0:
		return fmt.Errorf("rate limit %d < 0", o.RateLimit)
	case o.StallTimeout < 0:
		return fmt.Errorf("stall timeout %v < 0", o.StallTimeout)
	}
	return nil
}

// Result describes a finished (or failed) transfer.
type Result struct {
	Size        int64 // the object's size
	Transferred int64 // bytes sent or received by this run
	Resumed     int64 // bytes an interrupted earlier run had already moved
	Parts       int   // parts or ranges; 1 when the object moved in one request
	PartSize    int64 // the part or range size used; 0 for one request
	ETag        string
	Elapsed     time.Duration
}

// NotFoundError says that an object or bucket does not exist. Its message is the one line a
// user needs; the store's answer is kept for errors.As/Is.
type NotFoundError struct {
	Bucket, Key string
	Err         error
}

func (e *NotFoundError) Error() string {
	if e.Key == "" {
		return "no such bucket " + e.Bucket
	}
	return "no such object " + e.Bucket + "/" + e.Key
}

func (e *NotFoundError) Unwrap() error { return e.Err }

// errObjectChanged marks an object that changed while it was being downloaded.
var errObjectChanged = errors.New("the object changed while it was being downloaded")

// partSizeFor chooses the part size for an upload of size bytes over protocol: the asked-for
// size, raised to the protocol's minimum and so that the upload has at most MaxParts parts.
func partSizeFor(size, asked int64, protocol string) (int64, error) {
	ps := asked
	if protocol == objclient.ProtocolS3 && ps < MinS3PartSize {
		ps = MinS3PartSize
	}
	if need := ceilDiv(size, MaxParts); ps < need {
		ps = ceilDiv(need, 1<<20) << 20 // whole MiB, for part sizes a person can read
	}
	if ps > MaxPartSize {
		return 0, fmt.Errorf("%d bytes need parts of %d bytes, over the %d maximum", size, ps, int64(MaxPartSize))
	}
	return ps, nil
}

// span is one part or range of an object: bytes [Off, Off+Len).
type span struct {
	Index int // 0-based; upload part numbers are Index+1
	Off   int64
	Len   int64
}

// spans cuts size bytes into pieces of partSize, the last one shorter.
func spans(size, partSize int64) []span {
	n := ceilDiv(size, partSize)
	out := make([]span, 0, n)
	for i := int64(0); i < n; i++ {
		off := i * partSize
		out = append(out, span{Index: int(i), Off: off, Len: min(partSize, size-off)})
	}
	return out
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
