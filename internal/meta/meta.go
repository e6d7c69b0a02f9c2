// Package meta is the vocabulary every layer of Cairn shares: object and container names,
// Swift-style timestamps, the metadata stored with an object, listing entries and options, byte
// ranges, and the sentinel errors that cross layer boundaries (engine → storage node → proxy →
// front ends). It holds no I/O and no protocol details; each front end maps these errors to its
// own wire errors in one table.
package meta

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Sentinel errors shared by all layers. Wrap them with context; test with errors.Is.
var (
	ErrNotFound            = errors.New("not found")
	ErrExists              = errors.New("already exists")
	ErrNotEmpty            = errors.New("container not empty")
	ErrConflict            = errors.New("a newer version exists") // write carried an older timestamp
	ErrInsufficientStorage = errors.New("insufficient storage")   // disk full: HTTP 507 between nodes
	ErrCorrupt             = errors.New("stored data failed its checksum")
	ErrIncompleteBody      = errors.New("request body shorter than its declared length")
	ErrBodyTooLong         = errors.New("request body longer than its declared length")
	ErrInvalidRange        = errors.New("range not satisfiable")
	ErrUnavailable         = errors.New("not enough storage nodes answered")
	ErrInvalidName         = errors.New("invalid name")
	// ErrConditionalConflict: a conditional write decided for another writer has not landed
	// yet, or may have: try again (S3's 409 ConditionalRequestConflict).
	ErrConditionalConflict = errors.New("a conflicting conditional write is in progress")
	// ErrDecidedAbove: a write that the name's register did not decide reached a replica
	// whose register has decided a later write, a conditional one whose condition was tested
	// without this write: landing beneath it, this write would be lost to it, though it came
	// after the test (see DecidedError).
	ErrDecidedAbove = errors.New("a conditional write decided after this one began is in place")
)

// DeletedError is a not-found that says when the name was deleted: a node answers it for a
// name whose newest version is a tombstone (Swift's object server sends X-Backend-Timestamp
// with its 404), so that a proxy weighing several replicas' answers can tell a delete newer
// than another replica's version from a replica that never heard of the name.
type DeletedError struct{ At Timestamp }

func (e *DeletedError) Error() string { return fmt.Sprintf("deleted at %d: %v", e.At, ErrNotFound) }

// Unwrap makes a DeletedError an ErrNotFound.
func (e *DeletedError) Unwrap() error { return ErrNotFound }

// NewerError is a conflict that says when the version in place was written: a write (or
// delete) not newer than it is refused, and a node says how new it is (Swift's object server
// sends X-Backend-Timestamp with its 409), so that a writer whose clock is behind can move it
// on (AdvanceClock) rather than be refused again.
type NewerError struct{ At Timestamp }

func (e *NewerError) Error() string {
	return fmt.Sprintf("a version at %d is in place: %v", e.At, ErrConflict)
}

// Unwrap makes a NewerError an ErrConflict.
func (e *NewerError) Unwrap() error { return ErrConflict }

// DecidedError is ErrDecidedAbove with the decided write's timestamp, so that the writer can
// move its clock past it (AdvanceClock) before it tries again.
type DecidedError struct{ At Timestamp }

func (e *DecidedError) Error() string {
	return fmt.Sprintf("a write decided at %d: %v", e.At, ErrDecidedAbove)
}

// Unwrap makes a DecidedError an ErrDecidedAbove.
func (e *DecidedError) Unwrap() error { return ErrDecidedAbove }

// Timestamp orders every write of a name: the newest wins, as in Swift. It counts nanoseconds
// since the Unix epoch; Now never returns the same value twice in one process.
type Timestamp int64

var lastTimestamp atomic.Int64

// clockOffset is added to the machine's clock (SetClockOffset).
var clockOffset atomic.Int64

// SetClockOffset makes this process's clock run d ahead of the machine's (behind when
// negative): Wall and Now see it, as a machine whose clock is wrong by d would. It exists for
// the robustness tier's clock-skew fault (CAIRN_TEST_CLOCK_OFFSET); nothing else sets it.
func SetClockOffset(d time.Duration) { clockOffset.Store(int64(d)) }

// Wall is the wall clock of this process: the machine's, moved by SetClockOffset.
func Wall() time.Time {
	if d := clockOffset.Load(); d != 0 {
		return time.Now().Add(time.Duration(d))
	}
	return time.Now()
}

// Now returns a timestamp strictly greater than any this process returned before.
func Now() Timestamp {
	for {
		now := Wall().UnixNano()
		last := lastTimestamp.Load()
		if now <= last {
			now = last + 1
		}
		if lastTimestamp.CompareAndSwap(last, now) {
			return Timestamp(now)
		}
	}
}

// AdvanceClock makes every later Now return a timestamp greater than ts: a process that
// restarts with its clock behind the timestamps it wrote before (or that meets a version
// written by a clock ahead of its own) would otherwise stamp writes that lose to them.
func AdvanceClock(ts Timestamp) {
	for {
		last := lastTimestamp.Load()
		if int64(ts) <= last || lastTimestamp.CompareAndSwap(last, int64(ts)) {
			return
		}
	}
}

// Time converts the timestamp to a time.Time in UTC.
func (t Timestamp) Time() time.Time { return time.Unix(0, int64(t)).UTC() }

// ObjectName names an object: account (tenant), container (S3 bucket) and object (S3 key).
type ObjectName struct {
	Account   string
	Container string
	Object    string
}

// Object is everything stored about an object apart from its bytes.
type Object struct {
	Timestamp Timestamp
	Deleted   bool // a tombstone: the object was deleted at Timestamp
	Size      int64
	// ETag is the hex MD5 of the bytes, or for a manifest the protocol's composite ETag
	// (S3 multipart: hex MD5 of the part MD5s, "-", part count) without quotes.
	ETag        string
	ContentType string
	// Headers are the standard content headers that round-trip with the object, under their
	// canonical HTTP names: Content-Encoding, Content-Disposition, Content-Language,
	// Cache-Control, Expires.
	Headers map[string]string
	// UserMeta is user metadata with the protocol prefix (x-amz-meta-, X-Object-Meta-) removed,
	// names lower-cased.
	UserMeta map[string]string
	// SysMeta is metadata owned by Cairn itself: stored checksums ("checksum-crc32", ...),
	// multipart markers, manifest details. Keys are lower-case.
	SysMeta map[string]string
	// Manifest, when not nil, makes this object a manifest: its bytes are the concatenation of
	// the segments, and Size/ETag describe the whole.
	Manifest []Segment
	// Summary stands in for Manifest when a manifest's segment list was left out: a brief
	// HEAD (see IsManifest, SegmentCount, AsServed) of a manifest whose list is stored apart
	// because it is long (thousands of parts with long names would be megabytes read by
	// every HEAD). Nil otherwise.
	Summary *ManifestSummary
}

// ManifestSummary describes a manifest's segment list without holding it.
type ManifestSummary struct {
	Segments int
	Size     int64 // the bytes the manifest serves: the sum of its segments' Len
}

// IsManifest reports whether the object is a manifest, its segment list loaded or not.
func (o *Object) IsManifest() bool { return o.Manifest != nil || o.Summary != nil }

// SegmentCount is the number of segments of a manifest (0 for any other object).
func (o *Object) SegmentCount() int {
	if o.Manifest == nil && o.Summary != nil {
		return o.Summary.Segments
	}
	return len(o.Manifest)
}

// Segment is one piece of a manifest object, stored as an ordinary object, or (Swift SLO)
// inline bytes kept in the manifest itself.
type Segment struct {
	Container string
	Object    string
	// Size and ETag describe the whole segment object (for a sub-manifest, its served size and
	// manifest ETag), whatever part of it the segment selects: reads check them.
	Size int64
	ETag string
	// Ranged selects bytes [Offset, Offset+Length) of the segment object instead of all of it.
	Ranged         bool
	Offset, Length int64
	// Data, when not nil, is an inline segment: these bytes, and no object.
	Data []byte
	// SubManifest marks a segment object that is itself a manifest, read recursively.
	SubManifest bool
	// ContentType and Timestamp are the segment object's when the manifest was written (Swift
	// lists them in the manifest); informational only.
	ContentType string
	Timestamp   Timestamp
}

// Len is the number of bytes the segment contributes to its manifest.
func (s Segment) Len() int64 {
	switch {
	case s.Data != nil:
		return int64(len(s.Data))
	case s.Ranged:
		return s.Length
	}
	return s.Size
}

// Extended reports whether the segment uses anything beyond container, object, size and ETag.
func (s Segment) Extended() bool {
	return s.Ranged || s.Data != nil || s.SubManifest || s.ContentType != "" || s.Timestamp != 0
}

// LastModified is the time of the write that created this version: its timestamp, unless an S3
// change of its metadata alone (an ACL, tags, a lock) kept the time it had (SysLastModified).
func (o *Object) LastModified() time.Time { return o.Modified().Time() }

// Modified is LastModified as a timestamp.
func (o *Object) Modified() Timestamp {
	if v := o.SysMeta[SysLastModified]; v != "" {
		if t, err := strconv.ParseInt(v, 10, 64); err == nil && t > 0 {
			return Timestamp(t)
		}
	}
	return o.Timestamp
}

// Range is one byte range of a request: bytes=Start-End (End inclusive, -1 for open-ended), or
// with Suffix > 0 the last Suffix bytes.
type Range struct {
	Start, End int64
	Suffix     int64
}

// Resolve returns the offset and length the range selects within an object of the given size,
// or ErrInvalidRange when it selects nothing.
func (r Range) Resolve(size int64) (offset, length int64, err error) {
	if r.Suffix > 0 {
		if r.Suffix > size {
			r.Suffix = size
		}
		if size == 0 {
			return 0, 0, ErrInvalidRange
		}
		return size - r.Suffix, r.Suffix, nil
	}
	if r.Start >= size || r.Start < 0 {
		return 0, 0, ErrInvalidRange
	}
	end := r.End
	if end < 0 || end >= size {
		end = size - 1
	}
	if end < r.Start {
		return 0, 0, ErrInvalidRange
	}
	return r.Start, end - r.Start + 1, nil
}

// Container is what is stored about a container (an S3 bucket).
type Container struct {
	Name        string
	Created     Timestamp
	ObjectCount int64
	BytesUsed   int64
	// Meta is container metadata and settings (ACLs, quotas, policy), keys lower-case.
	Meta map[string]string
}

// ContainerPolicyKey is the key of meta.Container.Meta holding the index of the container's
// storage policy (decimal), set when the container is created and never changed: its objects
// are placed by that policy's object ring. A container without it (made before policies
// existed) is in policy 0. Between nodes it travels as Swift's X-Backend-Storage-Policy-Index.
const ContainerPolicyKey = "sys:storage-policy"

// PolicyIndex is the index of the container's storage policy (see ContainerPolicyKey); ok is
// false when the stored value is not an index.
func (c Container) PolicyIndex() (index int, ok bool) {
	v, set := c.Meta[ContainerPolicyKey]
	if !set {
		return 0, true
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n >= 0
}

// ContainerRow is what an account keeps of one of its containers (a row of Swift's account
// server), as the container's replicas report it: when it was created and deleted, and its
// usage. The newest put and delete timestamps win; a delete newer than the put means the
// container is deleted, and a deleted row lists and counts nothing.
type ContainerRow struct {
	Name            string
	PutTimestamp    Timestamp
	DeleteTimestamp Timestamp // 0: never deleted
	ObjectCount     int64
	BytesUsed       int64
}

// Deleted reports whether the row stands for a deleted container.
func (r ContainerRow) Deleted() bool { return r.DeleteTimestamp > r.PutTimestamp }

// Account is the summary of an account (a tenant).
type Account struct {
	Name           string
	ContainerCount int64
	ObjectCount    int64
	BytesUsed      int64
	Meta           map[string]string
}

// ListEntry is one object in a container listing.
type ListEntry struct {
	Name        string
	Timestamp   Timestamp
	Size        int64
	ETag        string
	ContentType string
	// Modified is the Last-Modified listings show when it is not Timestamp (0: Timestamp):
	// the object's Modified.
	Modified Timestamp
}

// LastModified is the time listings show for the entry.
func (e *ListEntry) LastModified() time.Time { return e.ModifiedTimestamp().Time() }

// ModifiedTimestamp is LastModified as a timestamp.
func (e *ListEntry) ModifiedTimestamp() Timestamp {
	if e.Modified != 0 {
		return e.Modified
	}
	return e.Timestamp
}

// ListOptions select a page of a listing, with Swift's semantics: names > Marker and < EndMarker
// that start with Prefix; with Delimiter, names with the delimiter after the prefix are rolled up
// into one common prefix each (counted against Limit).
type ListOptions struct {
	Prefix    string
	Delimiter string
	Marker    string
	EndMarker string
	Limit     int // 0 means the default page size (DefaultListLimit)
	Reverse   bool
}

// DefaultListLimit is the page size of a listing whose ListOptions.Limit is 0.
const DefaultListLimit = 10000

// ObjectListing is one page of a container listing.
type ObjectListing struct {
	Objects        []ListEntry
	CommonPrefixes []string
	// Truncated is true when more entries follow; NextMarker is the last name (object or common
	// prefix) returned, to pass as the next Marker.
	Truncated  bool
	NextMarker string
}

// ContainerListing is one page of an account listing.
type ContainerListing struct {
	Containers     []Container
	CommonPrefixes []string
	Truncated      bool
	NextMarker     string
}

// StoredHeaders are the content headers that round-trip with an object (meta.Object.Headers,
// under these canonical names): the same in S3 and Swift, and the ones Swift's object servers
// keep by default.
var StoredHeaders = []string{"Content-Encoding", "Content-Disposition", "Content-Language", "Cache-Control", "Expires", "X-Robots-Tag"}

// SysDeleteAt is the SysMeta key of an object's expiry (Unix seconds, decimal), which Swift's
// X-Delete-At / X-Delete-After set: reads hide the object from then on, and the expirer
// removes it.
const SysDeleteAt = "delete-at"

// ReservedPrefix starts the names of containers that Cairn keeps for itself (multipart upload
// segments, for example). Front ends refuse such names from clients and listings hide them.
const ReservedPrefix = "\x00"

// ResellerPrefix starts the name of a client account in Swift: Cairn's account "a" is Swift's
// "AUTH_a" (tempauth's reseller prefix), in URLs and in the cluster.
const ResellerPrefix = "AUTH_"

// SwiftAccount returns the name an account has in a cluster: Swift's, the reseller prefix and
// Cairn's name, which the ring hashes and the node protocol carries, so that a Cairn proxy
// finds an existing Swift cluster's data where Swift put it. Cairn's reserved accounts
// (ReservedPrefix) keep their names: they are in Swift's reserved namespace as they are.
func SwiftAccount(account string) string {
	if strings.HasPrefix(account, ReservedPrefix) {
		return account
	}
	return ResellerPrefix + account
}

// AccountFromSwift is the inverse of SwiftAccount; ok is false for a name that is neither
// reserved nor prefixed (an account of another reseller, which Cairn does not serve).
func AccountFromSwift(name string) (account string, ok bool) {
	if strings.HasPrefix(name, ReservedPrefix) {
		return name, true
	}
	account, ok = strings.CutPrefix(name, ResellerPrefix)
	return account, ok && account != ""
}

// Placed is the name as the rings place it: Swift's names (SwiftAccount, SwiftObject), so that
// Cairn's proxies and nodes put an object where Swift's would, and its devices keep it where
// their replicator looks for it.
func (n ObjectName) Placed() (account, container, object string) {
	return SwiftAccount(n.Account), n.Container, SwiftObject(n.Container, n.Object)
}

// SwiftObject returns the name an object (or a listing's prefix or marker) of a container has
// in a cluster. Swift keeps the objects of a reserved container in the reserved namespace too,
// so there they start with ReservedPrefix: Cairn's names of them ("<key>\x00<upload>" for an S3
// upload) are prefixed with it, which keeps their order. Other names are the same.
func SwiftObject(container, object string) string {
	if strings.HasPrefix(container, ReservedPrefix) {
		return ReservedPrefix + object
	}
	return object
}

// ObjectFromSwift is the inverse of SwiftObject; ok is false for a name SwiftObject cannot
// have made (an object of a reserved container outside the reserved namespace).
func ObjectFromSwift(container, name string) (object string, ok bool) {
	if strings.HasPrefix(container, ReservedPrefix) {
		return strings.CutPrefix(name, ReservedPrefix)
	}
	return name, true
}

// ErrNoContainer is returned for an object operation in a container that does not exist; it
// wraps ErrNotFound.
var ErrNoContainer = fmt.Errorf("container %w", ErrNotFound)

// SysManifestETag is the SysMeta key holding a manifest's ETag: a node stores a manifest as an
// empty object, so its own ETag and size would describe nothing.
const SysManifestETag = "manifest-etag"

// SysMeta keys of a fragment archive: an erasure-coded object (a storage policy of type
// erasure_coding, k data + m parity fragments) is stored as k+m archives, each an ordinary
// object on one device of the partition whose bytes are the archive; these keys say what it is
// a fragment of. The object's size and ETag are the proxy's (it hashes the whole body while
// encoding), so that AsServed and Listed report the object, not the archive. ECData is the
// timestamp of the PUT that wrote the bytes: a POST makes a newer version of each archive with
// the same bytes, and archives of one ECData and ETag decode together whatever POSTs reached
// them.
const (
	SysECIndex       = "ec-index"        // the fragment index, 0 <= i < k+m: the ring's replica i holds it
	SysECData        = "ec-data"         // the data fragments (k)
	SysECParity      = "ec-parity"       // the parity fragments (m)
	SysECSegmentSize = "ec-segment-size" // the bytes encoded at a time
	SysECSize        = "ec-size"         // the object's size
	SysECETag        = "ec-etag"         // the object's ETag
	SysECWritten     = "ec-written"      // the timestamp of the PUT that wrote the bytes
)

// ECArchive describes a fragment archive (see SysECIndex).
type ECArchive struct {
	Index, K, M int
	SegmentSize int64
	// Size and ETag are the whole object's; Written is the timestamp of the PUT of its bytes.
	Size    int64
	ETag    string
	Written Timestamp
}

// ECArchive reads what fragment archive the object is; ok is false for an object that is none
// (or whose keys do not parse: it cannot be decoded either way).
func (o Object) ECArchive() (a ECArchive, ok bool) {
	num := func(k string) int64 {
		n, err := strconv.ParseInt(o.SysMeta[k], 10, 64)
		if err != nil {
			ok = false
		}
		return n
	}
	if _, has := o.SysMeta[SysECIndex]; !has {
		return ECArchive{}, false
	}
	ok = true
	a = ECArchive{Index: int(num(SysECIndex)), K: int(num(SysECData)), M: int(num(SysECParity)), SegmentSize: num(SysECSegmentSize),
		Size: num(SysECSize), ETag: o.SysMeta[SysECETag], Written: Timestamp(num(SysECWritten))}
	if !ok || a.Index < 0 || a.K < 1 || a.M < 1 || a.Index >= a.K+a.M || a.SegmentSize < 1 || a.Size < 0 {
		return ECArchive{}, false
	}
	return a, true
}

// Set writes the archive's keys into sys (which must not be nil).
func (a ECArchive) Set(sys map[string]string) {
	for k, v := range map[string]int64{SysECIndex: int64(a.Index), SysECData: int64(a.K), SysECParity: int64(a.M),
		SysECSegmentSize: a.SegmentSize, SysECSize: a.Size, SysECWritten: int64(a.Written)} {
		sys[k] = strconv.FormatInt(v, 10)
	}
	sys[SysECETag] = a.ETag
}

// SameData reports whether two archives are fragments of the same bytes (the same PUT): then
// any k of them with distinct indexes decode the object, whatever POSTs changed since.
func (a ECArchive) SameData(b ECArchive) bool {
	return a.Written == b.Written && a.ETag == b.ETag && a.Size == b.Size && a.K == b.K && a.M == b.M && a.SegmentSize == b.SegmentSize
}

// WithoutEC returns sys without the keys of a fragment archive (sys itself when it has none):
// what the archive says of itself must not travel with the object elsewhere (a copy into
// another container, a POST).
func WithoutEC(sys map[string]string) map[string]string {
	if _, has := sys[SysECIndex]; !has {
		if _, has := sys[SysECSize]; !has {
			return sys
		}
	}
	out := make(map[string]string, len(sys))
	for k, v := range sys {
		switch k {
		case SysECIndex, SysECData, SysECParity, SysECSegmentSize, SysECSize, SysECETag, SysECWritten:
		default:
			out[k] = v
		}
	}
	return out
}

// SysListingETag is the SysMeta key of an ETag that container listings show instead of the
// object's (Swift's static large objects list the MD5 of their manifest document, followed by
// "; slo_etag=" and their served ETag, as Swift's container servers keep them).
const SysListingETag = "listing-etag"

// SysLastModified is the SysMeta key of the time (a Timestamp, in decimal) an object's
// Last-Modified shows when it is not its version's timestamp. S3 changes of an object's ACL,
// tags, retention or legal hold rewrite its metadata, under a new timestamp so that the
// change wins over the replicas' older copies as any write does, yet S3 does not move the
// object's Last-Modified for them; Swift's POST does move it, and writes the key empty.
const SysLastModified = "last-modified"

// SysListingSize is the SysMeta key of a size that container listings show instead of the
// object's as served: an encrypted object's plaintext size (its stored bytes are longer).
const SysListingSize = "listing-size"

// SysMeta keys of a symlink (an object that stands for another, made through Swift's API and
// followed by both front ends): the target as "container/object", URL-quoted; the target's
// account as "AUTH_account", URL-quoted, when it is not the link's own; for a static link, the
// ETag the target must have and the target's size.
const (
	SysSymlinkTarget  = "symlink-target"
	SysSymlinkAccount = "symlink-target-account"
	SysSymlinkETag    = "symlink-target-etag"
	SysSymlinkBytes   = "symlink-target-bytes"
)

// SymlinkListingETag is the listing ETag of a symlink with settings sys (Swift's container
// servers keep it so): the MD5 of nothing, then the link's settings as parameters, which
// Swift's JSON listings show as symlink_path, symlink_etag and symlink_bytes (and slo_etag, for
// a static link to a static large object).
func SymlinkListingETag(sys map[string]string, slo string) string {
	e := emptyMD5
	if slo != "" {
		e += "; slo_etag=" + slo
	}
	e += "; symlink_target=" + sys[SysSymlinkTarget]
	if a := sys[SysSymlinkAccount]; a != "" {
		e += "; symlink_target_account=" + a
	}
	if t := sys[SysSymlinkETag]; t != "" {
		e += "; symlink_target_etag=" + t + "; symlink_target_bytes=" + sys[SysSymlinkBytes]
	}
	return e
}

// emptyMD5 is the MD5 of nothing, a symlink's own ETag.
const emptyMD5 = "d41d8cd98f00b204e9800998ecf8427e"

// SymlinkTarget reads where a symlink points: the target's account (account, the link's own,
// unless the link names another), container and object. ok is false for an object that is not
// a symlink.
func (o *Object) SymlinkTarget(account string) (targetAccount, container, object string, ok bool) {
	target := o.SysMeta[SysSymlinkTarget]
	if target == "" {
		return "", "", "", false
	}
	unquote := func(s string) string {
		if u, err := url.PathUnescape(s); err == nil {
			return u
		}
		return s
	}
	container, object, _ = strings.Cut(unquote(target), "/")
	targetAccount = account
	if a := o.SysMeta[SysSymlinkAccount]; a != "" {
		targetAccount = strings.TrimPrefix(unquote(a), "AUTH_") // Swift URLs name account a "AUTH_a"
	}
	return targetAccount, container, object, true
}

// AsServed returns the object as clients see it: a manifest's size is the sum of its segments'
// and its ETag the one it was given; a fragment archive's are the whole object's; other objects
// are unchanged.
func (o Object) AsServed() Object {
	switch {
	case o.Manifest != nil:
		o.Size = 0
		for _, s := range o.Manifest {
			o.Size += s.Len()
		}
	case o.Summary != nil:
		o.Size = o.Summary.Size
	default:
		if a, ok := o.ECArchive(); ok {
			o.Size, o.ETag = a.Size, a.ETag
		}
		return o
	}
	o.ETag = o.SysMeta[SysManifestETag]
	return o
}

// Listed is the entry a container listing holds for the object under name: its size and ETag
// as served, or SysListingETag when it has one.
func (o *Object) Listed(name string) ListEntry {
	served := o.AsServed()
	if e := o.SysMeta[SysListingETag]; e != "" {
		served.ETag = e
	}
	if v := o.SysMeta[SysListingSize]; v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			served.Size = n
		}
	}
	e := ListEntry{Name: name, Timestamp: o.Timestamp, Size: served.Size, ETag: served.ETag, ContentType: o.ContentType}
	if m := o.Modified(); m != o.Timestamp {
		e.Modified = m
	}
	return e
}
