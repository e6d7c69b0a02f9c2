package versions

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/sse"
)

// Store writes, reads and removes versions through the proxy.
type Store struct {
	px *proxy.Proxy
	// mint stamps a new version (newTimestamp; a test makes two stores mint alike).
	mint func() meta.Timestamp
}

// New returns a Store over px.
func New(px *proxy.Proxy) *Store { return &Store{px: px, mint: newTimestamp} }

// Enable turns versioning on for a container (c, as read): it makes the versions container,
// in the container's storage policy, and returns the metadata to set on the container.
func (s *Store) Enable(ctx context.Context, account string, c meta.Container) (map[string]string, error) {
	vc := ContainerFor(c.Name)
	m := map[string]string{}
	if p, ok := c.Meta[meta.ContainerPolicyKey]; ok {
		m[meta.ContainerPolicyKey] = p
	}
	if err := s.px.CreateContainer(ctx, account, vc, m); err != nil && !errors.Is(err, meta.ErrExists) {
		return nil, fmt.Errorf("versions: create %q: %w", vc, err)
	}
	return map[string]string{KeyEnabled: "true", KeyContainer: vc}, nil
}

// Suspend is the metadata that turns versioning of c off, keeping the versions; a container
// with Object Lock keeps versioning on (ErrLockedConfig).
func Suspend(c meta.Container) (map[string]string, error) {
	if LockEnabled(c) {
		return nil, ErrLockedConfig
	}
	return map[string]string{KeyEnabled: "false"}, nil
}

// DeleteOptions qualify the removal of a version.
type DeleteOptions struct {
	// BypassGovernance lets a GOVERNANCE retention give way (the caller was allowed to).
	BypassGovernance bool
	// Now is the time retentions are judged at (zero: now).
	Now time.Time
	// NoRestore: removing the current version removes the object's link too and makes no
	// other version current (Swift's object versioning API); by default the newest version left
	// becomes current (S3's rule).
	NoRestore bool
}

// Put writes an object in a container of state st. With versioning on, the bytes become a new
// version and the object a link to it; otherwise it is the null version, written in place.
// versionID is the written version's ("" when the container was never versioned). opts.If is
// checked against the current object (the link, for a versioned one).
func (s *Store) Put(ctx context.Context, st State, name meta.ObjectName, obj meta.Object, body io.Reader, opts proxy.PutOptions) (stored meta.Object, versionID string, err error) {
	if !st.Enabled {
		stored, err = s.px.PutObject(ctx, name, obj, body, opts)
		if st.Versioned() {
			versionID = Null
		}
		return stored, versionID, err
	}
	cond, err := s.linkCondition(ctx, name, opts.If)
	if err != nil {
		return meta.Object{}, "", err
	}
	// A plain write is in flight from its stamp to its link; a conditional one is stamped
	// when none stamped before it is (proxy.Flights).
	var ts meta.Timestamp
	if cond.IsZero() {
		var landed func()
		ts, landed = s.px.Flights().StampPlain(flightKey(name), s.mint)
		defer landed()
	} else if ts, err = s.px.Flights().StampAlone(ctx, flightKey(name), flightWait, s.mint); err != nil {
		return meta.Object{}, "", err
	}
	vname := versionName(name, st, ts)
	// The version's name is new, minted here with its timestamp in it: an in-process node
	// need not look for what it holds (nodeclient PutOptions.Fresh).
	opts.If, opts.Timestamp, opts.Fresh = meta.Precondition{}, ts, true
	// An expiry is the link's: the object expires, its version stays (as Swift's).
	expiry := obj.SysMeta[meta.SysDeleteAt]
	if expiry != "" {
		obj.SysMeta = maps.Clone(obj.SysMeta)
		delete(obj.SysMeta, meta.SysDeleteAt)
	}
	withExpiry := func(stored meta.Object) meta.Object {
		if expiry != "" {
			stored.SysMeta = maps.Clone(stored.SysMeta)
			if stored.SysMeta == nil {
				stored.SysMeta = map[string]string{}
			}
			stored.SysMeta[meta.SysDeleteAt] = expiry
		}
		return stored
	}
	// The version and its link in one commit where they share a device (the embedded
	// default): one sync round instead of two. The link replaces only a link, nothing, or a
	// tombstone; a null version in place is kept first, below.
	stored, linkErr, err := s.px.PutTogether(ctx, vname, obj, body, opts, proxy.Companion{
		Name: name, Timestamp: ts + 1, If: cond, Over: SysLink,
		Build: func(stored meta.Object) meta.Object { return linkObject(name, vname.Object, withExpiry(stored)) },
	})
	switch {
	case errors.Is(err, proxy.ErrApart):
		// Apart (a cluster: another partition, usually another node), the version first and
		// then its link: a reader must never find a link to a version not yet written.
		seen, err := s.keepNullVersion(ctx, st, name)
		if err != nil {
			return meta.Object{}, "", err
		}
		if ts <= seen {
			ts = s.mint() // after what it replaces (keepNullVersion moved the clock past it)
		}
		stored, ts, err = s.putMinted(ts, func(ts meta.Timestamp) (meta.Object, error) {
			opts.Timestamp = ts
			return s.px.PutObject(ctx, versionName(name, st, ts), obj, body, opts)
		})
		if err != nil {
			return meta.Object{}, "", versionsErr(err)
		}
		vname = versionName(name, st, ts)
	case err != nil:
		return meta.Object{}, "", versionsErr(err)
	case linkErr == nil || errors.Is(linkErr, meta.ErrConflict) && cond.IsZero():
		// (ErrConflict: a newer write's link is in place, so this version, kept, is simply not
		// the newest: last writer wins, as for any PUT, and as S3 keeps both.)
		return stored, ID(ts), nil
	case errors.Is(linkErr, nodeclient.ErrCompanionRefused):
		// A null version is in place: it becomes one of the versions before the link
		// replaces it.
		if _, err := s.keepNullVersion(ctx, st, name); err != nil {
			return meta.Object{}, "", s.dropUnlinked(ctx, vname, err)
		}
	case errors.Is(linkErr, meta.ErrConflict):
		return meta.Object{}, "", s.unlinked(ctx, name, vname, cond, linkErr)
	default:
		return meta.Object{}, "", s.dropUnlinked(ctx, vname, linkErr)
	}
	err = s.putLink(ctx, name, linkObject(name, vname.Object, withExpiry(stored)), ts+1, cond)
	if errors.Is(err, meta.ErrConflict) && cond.IsZero() {
		err = nil // a newer write's link is in place: last writer wins, as above
	}
	if err != nil {
		return meta.Object{}, "", s.unlinked(ctx, name, vname, cond, err)
	}
	return stored, ID(ts), nil
}

// unlinked is what a PUT whose version vname was written but whose link was not is told,
// once the version is removed where it must be: the link was refused (412), not decided for
// this writer (409 ConditionalRequestConflict: another's decided link had not landed, or this
// one's decision found a writer presumed dead that may have), or, for a conditional PUT, a
// newer write (a concurrent DELETE's) was in place by the time its condition was decided. The
// last is no success: the condition was tested after that write, not before it, and the PUT
// did not become current; the client is told 409 and tries again. Other errors leave the
// version (the link may have been written).
func (s *Store) unlinked(ctx context.Context, name, vname meta.ObjectName, cond meta.Precondition, err error) error {
	if errors.Is(err, meta.ErrConflict) && !cond.IsZero() {
		err = fmt.Errorf("%q: a newer write came between the condition and the link (%v): %w", name.Object, err, meta.ErrConditionalConflict)
	}
	if errors.Is(err, meta.ErrPreconditionFailed) || errors.Is(err, meta.ErrConditionalConflict) {
		return s.dropUnlinked(ctx, vname, err)
	}
	return err
}

// versionName is where the version of name at ts is stored.
func versionName(name meta.ObjectName, st State, ts meta.Timestamp) meta.ObjectName {
	return meta.ObjectName{Account: name.Account, Container: st.Container, Object: ObjectName(name.Object, ts)}
}

// flightKey names an object in the proxy's flights.
func flightKey(name meta.ObjectName) string { return nodeclient.ObjectRegisterKey(name) }

// flightWait is how long a conditional write waits for the plain writes of its key stamped
// before it to land (proxy.Flights.StampAlone) before it is told 409.
const flightWait = 2 * time.Second

// maxMints bounds how many names a version write mints: each one taken was another proxy's,
// minted in the same 10 µs, and the next is later.
const maxMints = 8

// putMinted writes a new version with put, at ts and, each time another proxy had minted the
// same version name (proxy.ErrMintedTaken: nothing was written, the body not read), at a new
// timestamp. It returns what put stored and the timestamp it was stored at.
func (s *Store) putMinted(ts meta.Timestamp, put func(meta.Timestamp) (meta.Object, error)) (meta.Object, meta.Timestamp, error) {
	for mints := 1; ; mints++ {
		stored, err := put(ts)
		if !errors.Is(err, proxy.ErrMintedTaken) || mints == maxMints {
			return stored, ts, err
		}
		ts = s.mint()
	}
}

// dropUnlinked removes a version written for a PUT that then failed (why) before its link
// was written: it never became current, and goes as if never written. It returns what the
// client is told: why, once the version is gone. A version that could not be removed stays,
// noncurrent (never a wrong current one), and then the PUT's outcome is unknown
// (meta.ErrUnavailable, 503): a client told 412 or 409 must never find its bytes.
func (s *Store) dropUnlinked(ctx context.Context, vname meta.ObjectName, why error) error {
	err := s.px.DeleteObject(context.WithoutCancel(ctx), vname)
	if err != nil && !errors.Is(err, meta.ErrNotFound) {
		return fmt.Errorf("%v, and its version %q could not be removed (%v): %w", why, vname.Object, err, meta.ErrUnavailable)
	}
	return why
}

// versionsErr says that a missing container is the versions container.
func versionsErr(err error) error {
	if errors.Is(err, meta.ErrNoContainer) {
		return fmt.Errorf("%w: %w", ErrNoVersionsContainer, err)
	}
	return err
}

// linkCondition turns a write's condition on the current object into one on its link: the
// link's own ETag is nobody's, so If-Match is checked against the version it names and then
// becomes a compare-and-swap on the link seen, which keeps it atomic.
func (s *Store) linkCondition(ctx context.Context, name meta.ObjectName, cond meta.Precondition) (meta.Precondition, error) {
	if cond.IfMatch == nil {
		return cond, nil
	}
	cur, err := s.px.HeadObjectBrief(ctx, name)
	if errors.Is(err, meta.ErrNotFound) {
		return cond, fmt.Errorf("if-match: no object: %w", meta.ErrPreconditionFailed)
	}
	if err != nil {
		return cond, err
	}
	etag := cur.AsServed().ETag
	if IsLink(&cur) {
		etag = cur.SysMeta[meta.SysSymlinkETag]
	}
	if !slices.Contains(cond.IfMatch, "*") && !slices.Contains(cond.IfMatch, etag) {
		return cond, fmt.Errorf("if-match: %q: %w", etag, meta.ErrPreconditionFailed)
	}
	return meta.Precondition{IfNoneMatch: cond.IfNoneMatch, IfTimestamp: cur.Timestamp, ExpiredAt: cond.ExpiredAt}, nil
}

// emptyMD5 is the ETag of a link (it has no bytes).
var emptyMD5 = func() string { s := md5.Sum(nil); return hex.EncodeToString(s[:]) }()

// link makes the object at name a link to its version vobj (stored), stamped at: a new
// version's link a nanosecond after the version, so that it replaces whatever the container
// held before the version was written.
func (s *Store) link(ctx context.Context, name meta.ObjectName, vobj string, stored meta.Object, at meta.Timestamp, cond meta.Precondition) error {
	return s.putLink(ctx, name, linkObject(name, vobj, stored), at, cond)
}

func (s *Store) putLink(ctx context.Context, name meta.ObjectName, link meta.Object, at meta.Timestamp, cond meta.Precondition) error {
	_, err := s.px.PutObject(ctx, name, link, strings.NewReader(""), proxy.PutOptions{Timestamp: at, If: cond})
	return err
}

// linkObject is the link at name to its version vobj (stored, as written).
func linkObject(name meta.ObjectName, vobj string, stored meta.Object) meta.Object {
	served := stored.AsServed()
	if stored.SysMeta[meta.SysListingSize] != "" {
		// An encrypted version (package sse): its link shows what its listing entry shows,
		// the plaintext's size and ETag, not the stored bytes'.
		l := stored.Listed("")
		served.Size, served.ETag = l.Size, l.ETag
	}
	etag, slo := served.ETag, ""
	if hash, s, ok := sloListingETag(stored.SysMeta[meta.SysListingETag]); ok {
		// A Swift static large object: a static link records its manifest's ETag (as Swift's
		// symlinks do), and listings show its slo_etag beside it.
		etag, slo = hash, s
	}
	sys := map[string]string{
		meta.SysSymlinkTarget: url.PathEscape(ContainerFor(name.Container)) + "/" + url.PathEscape(vobj),
		meta.SysSymlinkETag:   etag,
		meta.SysSymlinkBytes:  strconv.FormatInt(served.Size, 10),
		SysLink:               "true",
	}
	sys[meta.SysListingETag] = meta.SymlinkListingETag(sys, slo)
	if expiry := stored.SysMeta[meta.SysDeleteAt]; expiry != "" {
		sys[meta.SysDeleteAt] = expiry
	}
	return meta.Object{ContentType: stored.ContentType, ETag: emptyMD5, SysMeta: sys}
}

// sloListingETag reads a Swift static large object's listing ETag ("<manifest MD5>;
// slo_etag=<ETag>"): the manifest's MD5 and the slo_etag parameter.
func sloListingETag(e string) (hash, slo string, ok bool) {
	hash, rest, found := strings.Cut(e, ";")
	if !found {
		return "", "", false
	}
	for _, p := range strings.Split(rest, ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(p), "slo_etag="); ok {
			return strings.TrimSpace(hash), v, true
		}
	}
	return "", "", false
}

// IsLink reports whether an object is a link to its current version in container's versions.
func IsLink(obj *meta.Object) bool { return obj.SysMeta[SysLink] == "true" }

// Current reads the current object at name: through its link, for a versioned one.
func (s *Store) Current(ctx context.Context, name meta.ObjectName) (meta.Object, error) {
	cur, err := s.px.HeadObject(ctx, name)
	if err != nil {
		return cur, err
	}
	if vobj, _, ok := LinkedVersion(&cur); ok {
		return s.px.HeadObject(ctx, meta.ObjectName{Account: name.Account, Container: ContainerFor(name.Container), Object: vobj})
	}
	return cur, nil
}

// LinkedVersion is the version a link names: its name in the versions container and ID.
func LinkedVersion(link *meta.Object) (vobj, id string, ok bool) {
	if !IsLink(link) {
		return "", "", false
	}
	_, _, target, ok := link.SymlinkTarget("")
	if !ok {
		return "", "", false
	}
	_, ts, ok := SplitObjectName(target)
	if !ok {
		return "", "", false
	}
	return target, ID(ts), true
}

// keepNullVersion copies the object at name into the versions container when it is a null
// version (not a link), before a versioned write replaces it, as Swift does: the null version
// stays one of the object's versions. It returns the timestamp of what name holds (its
// deletion's, deleted), and moves this process's clock past it: a write that replaces it must
// be stamped after it, and a proxy whose clock is behind the one that wrote it would stamp a
// version older than the current one, whose link then loses (a PUT acknowledged after another
// ended, not current; the robustness tier's clock fault found it).
func (s *Store) keepNullVersion(ctx context.Context, st State, name meta.ObjectName) (meta.Timestamp, error) {
	cur, err := s.px.HeadObjectBrief(ctx, name)
	if deleted := (*meta.DeletedError)(nil); errors.As(err, &deleted) {
		meta.AdvanceClock(deleted.At)
		return deleted.At, nil
	}
	if errors.Is(err, meta.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("versions: head %q: %w", name.Object, err)
	}
	meta.AdvanceClock(cur.Timestamp)
	return cur.Timestamp, s.keepIfNull(ctx, st, name, cur)
}

// keepIfNull is keepNullVersion once it has read cur, the object at name.
func (s *Store) keepIfNull(ctx context.Context, st State, name meta.ObjectName, cur meta.Object) error {
	var err error
	if IsLink(&cur) || cur.Deleted {
		return nil
	}
	if cur.Summary != nil {
		if cur, err = s.px.HeadObject(ctx, name); err != nil {
			return fmt.Errorf("versions: head %q: %w", name.Object, err)
		}
	}
	dst := meta.ObjectName{Account: name.Account, Container: st.Container, Object: ObjectName(name.Object, cur.Timestamp/swiftUnit*swiftUnit)}
	err = CopyAsStored(ctx, s.px, name, cur, dst, proxy.PutOptions{Timestamp: cur.Timestamp / swiftUnit * swiftUnit})
	if errors.Is(err, meta.ErrConflict) {
		// An earlier write that failed after keeping it (or a racing one) made the copy
		// already: it is the same version, at the same timestamp.
		if _, herr := s.px.HeadObjectBrief(ctx, dst); herr == nil {
			return nil
		}
	}
	if errors.Is(err, meta.ErrNoContainer) {
		return fmt.Errorf("%w: %w", ErrNoVersionsContainer, err)
	}
	return err
}

// CopyAsStored copies an object with everything it has (metadata, manifest settings) but its
// timestamp: a manifest of segments others may share (Swift's static large objects) stays a
// manifest of the same segments, and anything else (an S3 multipart object, whose segments die
// with it, included) is copied byte for byte.
func CopyAsStored(ctx context.Context, px *proxy.Proxy, src meta.ObjectName, obj meta.Object, dst meta.ObjectName, opts proxy.PutOptions) error {
	out := meta.Object{ContentType: obj.ContentType, Headers: maps.Clone(obj.Headers), UserMeta: maps.Clone(obj.UserMeta), SysMeta: maps.Clone(obj.SysMeta)}
	delete(out.SysMeta, meta.SysManifestETag)
	var body io.Reader = strings.NewReader("")
	if obj.Manifest != nil && obj.SysMeta[proxy.SysOwnsSegments] == "" {
		out.Manifest, out.ETag = obj.Manifest, obj.ETag
	} else {
		delete(out.SysMeta, proxy.SysOwnsSegments)
		delete(out.SysMeta, meta.SysListingETag)
		if obj.Manifest != nil && sse.Encrypted(&obj) {
			// Each part is a stream of its own: the copy says where they are.
			out.SysMeta[sse.SysParts] = sse.EncodeParts(obj.Manifest)
		}
		rd, err := px.GetObject(ctx, src, nil)
		if err != nil {
			return fmt.Errorf("versions: read %s/%s: %w", src.Container, src.Object, err)
		}
		defer rd.Close()
		out.Size, body = rd.Length, rd
	}
	if _, err := px.PutObject(ctx, dst, out, body, opts); err != nil {
		return fmt.Errorf("versions: copy to %s/%s: %w", dst.Container, dst.Object, err)
	}
	return nil
}

// Delete deletes an object in a container of state st. With versioning on, a delete marker
// becomes the newest version and the link goes (markerID is its version ID); otherwise the
// object (the null version, or a link) is deleted.
func (s *Store) Delete(ctx context.Context, st State, name meta.ObjectName) (markerID string, err error) {
	if !st.Enabled {
		return "", s.px.DeleteObject(ctx, name)
	}
	if _, err := s.keepNullVersion(ctx, st, name); err != nil {
		return "", err
	}
	ts, landed := s.px.Flights().StampPlain(flightKey(name), s.mint)
	defer landed()
	_, ts, err = s.putMinted(ts, func(ts meta.Timestamp) (meta.Object, error) {
		return s.px.PutObject(ctx, versionName(name, st, ts), meta.Object{ContentType: DeleteMarkerType}, strings.NewReader(""), proxy.PutOptions{Timestamp: ts, Fresh: true})
	})
	if err != nil {
		if errors.Is(err, meta.ErrNoContainer) {
			return "", fmt.Errorf("%w: %w", ErrNoVersionsContainer, err)
		}
		return "", err
	}
	// ErrConflict: a newer write's link is in place; the marker stays as a version before it.
	if err := s.px.DeleteObjectAt(ctx, name, ts+1, meta.Precondition{}); err != nil && !errors.Is(err, meta.ErrNotFound) && !errors.Is(err, meta.ErrConflict) {
		return "", err
	}
	return ID(ts), nil
}

// Version is one version of an object, as Resolve finds it.
type Version struct {
	ID string
	// Name is where the version is stored: the object itself for the null version, or its
	// object in the versions container.
	Name meta.ObjectName
	// Object is the version's metadata (for a link, the link's: the caller reads through it).
	Object meta.Object
	// DeleteMarker is true for a delete marker.
	DeleteMarker bool
}

// Resolve finds the version id of the object at name (read access decided by the caller).
// Null is the object itself when it is not a link (ErrNoSuchVersion otherwise, or when there is
// none); any other ID is that version in the versions container.
func (s *Store) Resolve(ctx context.Context, st State, name meta.ObjectName, id string) (Version, error) {
	if id == Null {
		cur, err := s.px.HeadObject(ctx, name)
		if errors.Is(err, meta.ErrNotFound) || err == nil && IsLink(&cur) {
			return Version{}, fmt.Errorf("%w: %s of %q", ErrNoSuchVersion, id, name.Object)
		}
		return Version{ID: Null, Name: name, Object: cur}, err
	}
	ts, err := ParseID(id)
	if err != nil {
		return Version{}, err
	}
	if !st.Versioned() {
		return Version{}, fmt.Errorf("%w: %s of %q", ErrNoSuchVersion, id, name.Object)
	}
	vname := meta.ObjectName{Account: name.Account, Container: st.Container, Object: ObjectName(name.Object, ts)}
	obj, err := s.px.HeadObject(ctx, vname)
	if errors.Is(err, meta.ErrNotFound) {
		return Version{}, fmt.Errorf("%w: %s of %q", ErrNoSuchVersion, id, name.Object)
	}
	if err != nil {
		return Version{}, err
	}
	return Version{ID: ID(ts), Name: vname, Object: obj, DeleteMarker: obj.ContentType == DeleteMarkerType}, nil
}

// DeleteVersion removes one version for good. When it was the current one, the newest version
// left that is not a delete marker becomes current (S3's rule; Swift's middleware leaves none
// current, and its s3api restores the same way: see DeleteOptions.NoRestore). It returns what was
// removed; its Name is zero when the version did not exist.
//
// Concurrent deletes of versions of one object must not leave a link to a removed version:
// the version goes first and the link is looked at after, and a restore checks that the version
// it linked to still exists. Whichever of two racing deletes looks last sees the other's link.
func (s *Store) DeleteVersion(ctx context.Context, st State, name meta.ObjectName, id string, opts DeleteOptions) (Version, error) {
	v, err := s.Resolve(ctx, st, name, id)
	if errors.Is(err, ErrNoSuchVersion) {
		// Deleting a version that is not there succeeds, as in S3.
		return Version{ID: id}, nil
	}
	if err != nil {
		return Version{}, err
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	if err := CheckRemove(&v.Object, now, opts.BypassGovernance); err != nil {
		return Version{}, fmt.Errorf("version %s of %q: %w", id, name.Object, err)
	}
	// Only the version checked goes: a legal hold or retention set on it since (a newer
	// metadata timestamp) makes the delete fail its condition, and it is checked again.
	removeChecked := func(n meta.ObjectName) error {
		err := s.ignoreMissing(s.px.DeleteObjectIf(ctx, n, meta.Precondition{IfTimestamp: v.Object.Timestamp}))
		if errors.Is(err, meta.ErrPreconditionFailed) {
			return fmt.Errorf("version %s of %q changed while being removed: %w", id, name.Object, meta.ErrConflict)
		}
		return err
	}
	if id == Null {
		return v, removeChecked(name)
	}
	if err := removeChecked(v.Name); err != nil {
		return Version{}, err
	}
	if opts.NoRestore {
		return v, s.unlink(ctx, name, v.Name.Object)
	}
	if !v.DeleteMarker {
		// Only a version the link named needs another made current; with nothing in place
		// (a delete while suspended left none), the key stays deleted.
		if cur, err := s.px.HeadObjectBrief(ctx, name); err == nil && !cur.Deleted {
			if linked, _, ok := LinkedVersion(&cur); !ok || linked != v.Name.Object {
				return v, nil
			}
		} else {
			return v, nil
		}
	}
	return v, s.restoreNewest(ctx, st, name, v.Name.Object)
}

// unlink removes the object's link when it names the version removed (its name in the
// versions container), unless a newer write replaced it meanwhile.
func (s *Store) unlink(ctx context.Context, name meta.ObjectName, removed string) error {
	cur, err := s.px.HeadObjectBrief(ctx, name)
	if errors.Is(err, meta.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if linked, _, ok := LinkedVersion(&cur); !ok || cur.Deleted || linked != removed {
		return nil
	}
	err = s.px.DeleteObjectIf(ctx, name, meta.Precondition{IfTimestamp: cur.Timestamp})
	if errors.Is(err, meta.ErrPreconditionFailed) {
		return nil // replaced meanwhile: the newer link stays
	}
	return s.ignoreMissing(err)
}

// MakeCurrent makes the version id of the object at name its current one: the object becomes a
// link to it (Swift's PUT ?version-id). A delete marker cannot be made current.
func (s *Store) MakeCurrent(ctx context.Context, st State, name meta.ObjectName, id string) (Version, error) {
	if id == Null {
		return Version{}, fmt.Errorf("%w: %q cannot be linked to", ErrInvalidID, id)
	}
	v, err := s.Resolve(ctx, st, name, id)
	if err != nil {
		return Version{}, err
	}
	if v.DeleteMarker {
		return Version{}, fmt.Errorf("%w: %s of %q is a delete marker", ErrNoSuchVersion, id, name.Object)
	}
	if _, err := s.keepNullVersion(ctx, st, name); err != nil {
		return Version{}, err
	}
	if err := s.link(ctx, name, v.Name.Object, v.Object, meta.Now(), meta.Precondition{}); err != nil {
		return Version{}, err
	}
	return v, nil
}

func (s *Store) ignoreMissing(err error) error {
	if errors.Is(err, meta.ErrNotFound) {
		return nil
	}
	return err
}

// maxRestores bounds how often a restore starts over because the version it linked to was
// removed meanwhile.
const maxRestores = 10

// restoreNewest makes the newest version left current after the version removed (its name in
// the versions container) went: when the object's link named it, or nothing is in place and
// the newest version is no delete marker. A null version in place, or a link to another
// version, is left alone.
func (s *Store) restoreNewest(ctx context.Context, st State, name meta.ObjectName, removed string) error {
	for range maxRestores {
		cur, err := s.px.HeadObjectBrief(ctx, name)
		if err != nil && !errors.Is(err, meta.ErrNotFound) {
			return err
		}
		linked, _, isLink := LinkedVersion(&cur)
		if err == nil && !cur.Deleted && (!isLink || linked != removed) {
			if !isLink {
				return nil
			}
			// A link to another version: done, unless that one was removed meanwhile.
			if _, herr := s.px.HeadObjectBrief(ctx, meta.ObjectName{Account: name.Account, Container: st.Container, Object: linked}); !errors.Is(herr, meta.ErrNotFound) {
				return herr
			}
			removed = linked
			continue
		}
		page, err := s.px.ListObjects(ctx, name.Account, st.Container, meta.ListOptions{Prefix: Prefix(name.Object), Limit: 1})
		if err != nil && !errors.Is(err, meta.ErrNotFound) {
			return err
		}
		if len(page.Objects) == 0 || page.Objects[0].ContentType == DeleteMarkerType {
			if !isLink {
				return nil
			}
			// No version left to link to, or a delete marker is the newest: the link goes,
			// unless another restore replaced it meanwhile (then it is looked at again).
			err := s.px.DeleteObjectIf(ctx, name, meta.Precondition{IfTimestamp: cur.Timestamp})
			if errors.Is(err, meta.ErrPreconditionFailed) {
				continue
			}
			return s.ignoreMissing(err)
		}
		vname := meta.ObjectName{Account: name.Account, Container: st.Container, Object: page.Objects[0].Name}
		obj, err := s.px.HeadObject(ctx, vname)
		if errors.Is(err, meta.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		// A racing restore's newer link wins (ErrConflict); it is checked all the same.
		if err := s.link(ctx, name, vname.Object, obj, meta.Now(), meta.Precondition{}); err != nil && !errors.Is(err, meta.ErrConflict) {
			return err
		}
		removed = "" // what is linked now is checked on the next round
	}
	return fmt.Errorf("versions: %q: versions removed faster than one can be made current", name.Object)
}

// ErrVersionsLeft: a container cannot be deleted while its versions container holds versions
// (a versioned container is empty only when every version of every object is gone, as in S3
// and Swift).
var ErrVersionsLeft = fmt.Errorf("versions: versions left: %w", meta.ErrNotEmpty)

// DeleteContainer deletes a container and its versions container: meta.ErrNotEmpty while the
// container lists objects, ErrVersionsLeft while versions remain. The versions container goes
// first (a version written meanwhile then fails rather than being orphaned) and is made again
// when the container's own delete fails.
func (s *Store) DeleteContainer(ctx context.Context, account, container string) error {
	if c, err := s.px.HeadContainer(ctx, account, container); err == nil && c.ObjectCount > 0 {
		// Refused without touching the versions container (the common case: objects left).
		return fmt.Errorf("versions: delete container %q: %w", container, meta.ErrNotEmpty)
	}
	vc := ContainerFor(container)
	c, err := s.px.HeadContainer(ctx, account, vc)
	switch {
	case errors.Is(err, meta.ErrNotFound):
		return s.px.DeleteContainer(ctx, account, container)
	case err != nil:
		return fmt.Errorf("versions: delete container %q: %w", container, err)
	case c.ObjectCount > 0:
		return fmt.Errorf("delete container %q: %w", container, ErrVersionsLeft)
	}
	if err := s.px.DeleteContainer(ctx, account, vc); errors.Is(err, meta.ErrNotEmpty) {
		return fmt.Errorf("delete container %q: %w", container, ErrVersionsLeft)
	} else if err != nil && !errors.Is(err, meta.ErrNotFound) {
		return fmt.Errorf("versions: delete container %q: %w", vc, err)
	}
	err = s.px.DeleteContainer(ctx, account, container)
	if err == nil {
		return nil
	}
	m := map[string]string{}
	if p, ok := c.Meta[meta.ContainerPolicyKey]; ok {
		m[meta.ContainerPolicyKey] = p
	}
	if uerr := s.px.CreateContainer(context.WithoutCancel(ctx), account, vc, m); uerr != nil {
		return errors.Join(err, fmt.Errorf("versions: make the versions container of %q again: %w", container, uerr))
	}
	return err
}

// DeleteMarkerCurrent reports whether the newest version of a key that has no current object
// is a delete marker, and its ID: S3 answers a read of such a key with x-amz-delete-marker.
func (s *Store) DeleteMarkerCurrent(ctx context.Context, st State, name meta.ObjectName) (id string, ok bool) {
	if !st.Versioned() {
		return "", false
	}
	page, err := s.px.ListObjects(ctx, name.Account, st.Container, meta.ListOptions{Prefix: Prefix(name.Object), Limit: 1})
	if err != nil || len(page.Objects) == 0 || page.Objects[0].ContentType != DeleteMarkerType {
		return "", false
	}
	_, ts, ok := SplitObjectName(page.Objects[0].Name)
	return ID(ts), ok
}
