// Package objclient owns Cairn's outbound object-store clients: one Client interface spoken over
// S3 (SigV4, path-style) or the Swift API (v1 auth or a pre-issued token), against Cairn or any
// other store. The benchmark drivers (internal/bench) and the command-line client (cairn
// put/get/ls/rm, internal/transfer) share it, so that what the benchmark measures is exactly what
// the client does. It never retries: a retry would hide the failure a benchmark is measuring,
// and callers that want one (the transfer client) decide for themselves.
package objclient

import (
	"context"
	"errors"
	"io"
	"time"
)

// Protocols a Client can speak.
const (
	ProtocolS3    = "s3"
	ProtocolSwift = "swift"
)

// Config says how to reach and authenticate to a store.
type Config struct {
	Protocol string // ProtocolS3 (default) or ProtocolSwift

	// S3: Endpoint is the base URL (http://host:port); requests are path-style.
	Endpoint  string
	AccessKey string
	SecretKey string
	Region    string // default us-east-1

	// Swift, either v1 auth (AuthURL ending in /auth/v1.0, User "account:user", Key) or a
	// pre-issued Token with its StorageURL (http://host:port/v1/AUTH_account).
	AuthURL    string
	User       string
	Key        string
	Token      string
	StorageURL string

	// Concurrency sizes the idle-connection pool: one kept-alive connection per worker.
	// Default 16.
	Concurrency int
	// Timeout bounds one request including reading its body. Default 2 minutes.
	Timeout time.Duration
	// BucketLocation, for S3, is the LocationConstraint of the buckets CreateBucket makes:
	// "REGION:POLICY" puts them in a storage policy (a microstore's). "": none.
	BucketLocation string
}

// ObjectInfo describes one object, as a listing or a HEAD returns it.
type ObjectInfo struct {
	Key          string
	Size         int64
	ETag         string // without quotes
	LastModified time.Time
	ContentType  string
	Metadata     map[string]string // user metadata, names lower-case without the protocol prefix
}

// PutOptions are the optional parts of an upload.
type PutOptions struct {
	ContentType string
	Metadata    map[string]string // user metadata (x-amz-meta-*, X-Object-Meta-*)
}

// PutResult is what the store answered to an upload.
type PutResult struct {
	ETag string // without quotes
}

// GetOptions select what a download fetches and where the bytes go.
type GetOptions struct {
	// RangeStart and RangeEnd (inclusive) ask for part of the object; RangeEnd < 0 means
	// "to the end". Both zero with Ranged false fetches the whole object.
	Ranged     bool
	RangeStart int64
	RangeEnd   int64
	// W receives the body; nil discards it (benchmarks).
	W io.Writer
}

// GetResult is what a download received.
type GetResult struct {
	Bytes        int64         // body bytes received
	TTFB         time.Duration // from sending the request to the response headers arriving
	Size         int64         // the whole object's size (from Content-Range when ranged)
	ETag         string        // without quotes
	LastModified time.Time
}

// ListOptions select one page of a listing.
type ListOptions struct {
	Prefix    string
	Delimiter string
	Marker    string // list keys after this one (S3 v2: start-after or the continuation token)
	Limit     int    // default 1000
}

// ListPage is one page of a listing.
type ListPage struct {
	Objects   []ObjectInfo
	Prefixes  []string // common prefixes when a Delimiter was given
	Truncated bool
	// Next is the Marker that fetches the following page; empty when not Truncated.
	Next string
}

// Part is one uploaded part of a large object.
type Part struct {
	Number int // 1-based
	ETag   string
	Size   int64
}

// Client talks to one store. Implementations are safe for concurrent use.
type Client interface {
	Protocol() string
	// Endpoint is the URL requests go to (the S3 endpoint or the Swift storage URL), for
	// reports and messages.
	Endpoint() string
	// Check makes one request before any work so that a wrong endpoint or key fails in one
	// clear line naming the problem. With create it creates bucket (an existing one that the
	// caller owns is fine), else bucket must exist; an empty bucket checks only the credentials.
	Check(ctx context.Context, bucket string, create bool) error

	CreateBucket(ctx context.Context, bucket string) error // already owned is not an error
	DeleteBucket(ctx context.Context, bucket string) error
	ListBuckets(ctx context.Context) ([]string, error)

	Put(ctx context.Context, bucket, key string, body io.Reader, size int64, opts PutOptions) (PutResult, error)
	Get(ctx context.Context, bucket, key string, opts GetOptions) (GetResult, error)
	Head(ctx context.Context, bucket, key string) (ObjectInfo, error)
	Delete(ctx context.Context, bucket, key string) error // a missing object is not an error
	// Copy makes bucket/key a copy of srcBucket/srcKey in the store (no bytes through the
	// client): S3's CopyObject, Swift's X-Copy-From.
	Copy(ctx context.Context, srcBucket, srcKey, bucket, key string) (PutResult, error)
	List(ctx context.Context, bucket string, opts ListOptions) (ListPage, error)

	// Large objects: S3 multipart uploads, or Swift static large objects (segments in the
	// container bucket+"_segments", then a manifest). The upload ID is opaque to callers and
	// stable, so that an interrupted upload can be resumed from ListParts.
	StartUpload(ctx context.Context, bucket, key string, opts PutOptions) (uploadID string, err error)
	UploadPart(ctx context.Context, bucket, key, uploadID string, number int, body io.Reader, size int64) (Part, error)
	ListParts(ctx context.Context, bucket, key, uploadID string) ([]Part, error)
	CompleteUpload(ctx context.Context, bucket, key, uploadID string, parts []Part) (PutResult, error)
	AbortUpload(ctx context.Context, bucket, key, uploadID string) error

	Close() // releases idle connections
}

// Error is a non-success answer from a store.
type Error struct {
	Op      string // put, get, head, delete, list, create-bucket, auth, ...
	Status  int
	Code    string // S3 error code from the XML body; empty for HEAD and for Swift
	Message string
}

func (e *Error) Error() string {
	s := "objclient: " + e.Op + ": HTTP " + itoa(e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// IsNotFound reports whether err is a 404 answer.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == 404
}

// ErrShortBody marks a response body shorter than its Content-Length: a truncated GET must
// never count as a fast one.
var ErrShortBody = errors.New("response body shorter than Content-Length")
