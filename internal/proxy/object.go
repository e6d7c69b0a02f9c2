package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// SysOwnsSegments marks a manifest whose segments exist only for it (S3 multipart): deleting or
// replacing the manifest deletes them.
const SysOwnsSegments = "owns-segments"

// PutOptions hook into an object PUT.
type PutOptions struct {
	// BeforeCommit runs once the whole body has arrived and before the object becomes visible,
	// with its final Size and ETag; it may add SysMeta (verified checksums). An error aborts the
	// PUT and nothing is stored.
	BeforeCommit func(obj *meta.Object) error
	// If is a condition on the version the PUT replaces, evaluated by each replica in its
	// commit (meta.ErrPreconditionFailed when a quorum finds it false).
	If meta.Precondition
	// Timestamp stamps the new version (zero: now): an object version's name says when it
	// was written (internal/versions), so its data and its link share one.
	Timestamp meta.Timestamp
	// Fresh: the name was minted for this write with Timestamp in it (see nodeclient
	// PutOptions.Fresh); a node of this process may skip looking for a version under it.
	// Another proxy may mint the same name (a version's names the 10 µs its timestamp falls
	// in), and no replica may keep one writer's bytes under a name another writer was told
	// is its: unless the nodes are this process's alone (nodeclient.Sole), the name's
	// register decides which writer has it, and the others get ErrMintedTaken before their
	// body is read.
	Fresh bool

	// decidedGen fences an erasure-coded write its register decided (decided.go): each
	// archive's commit carries it (nodeclient PutOptions.DecidedGen).
	decidedGen uint64
	// listing is the write's listing side (listingFor), shared by the paths it takes.
	listing *writeListing
}

// ObjectReader is an open object: its metadata and the bytes of the requested range.
type ObjectReader struct {
	Object meta.Object
	// Offset and Length are the range Body returns (the whole object without a range).
	Offset, Length int64
	io.ReadCloser
}

// PutObject stores an object in an existing container (meta.ErrNoContainer otherwise). obj
// carries the metadata and Size (-1 when unknown); with obj.Manifest set, body must be empty and
// obj.ETag is the manifest's ETag. Success means a quorum of replicas synced data and metadata.
func (p *Proxy) PutObject(ctx context.Context, name meta.ObjectName, obj meta.Object, body io.Reader, opts PutOptions) (meta.Object, error) {
	ctx, pl, err := p.placeObject(ctx, name, true)
	if err != nil {
		return meta.Object{}, fmt.Errorf("put %q: %w", name.Object, err)
	}
	prepare(&obj, opts)
	listing := p.listingFor(name, pl)
	opts.listing = listing
	undecided := !sole(pl)
	nopts := func(t target) nodeclient.PutOptions {
		return nodeclient.PutOptions{BeforeCommit: opts.BeforeCommit, If: opts.If, Containers: listing.to(t.replica), Listed: listing.listed,
			Fresh: opts.Fresh, Undecided: undecided}
	}
	var res nodeclient.PutResult
	decided := false
	if (!opts.If.IsZero() && pl.ring.Replicas() > 1) || (opts.Fresh && !sole(pl)) {
		res, err = p.putDecided(ctx, pl, name, obj, body, opts, nopts)
		decided = !errors.Is(err, ErrNoRegisters)
	}
	if decided {
		// made through the name's register (decided.go)
	} else if pl.scheme != nil {
		res, err = p.putEC(ctx, pl, name, obj, body, opts)
	} else if t := pl.primaries; len(t) == 1 && t[0].err == nil && pl.ring.Replicas() == 1 {
		res, err = t[0].client.PutObject(ctx, t[0].dev.Name, pl.part, name, obj, body, nopts(t[0]))
	} else {
		res, err = p.putReplicas(ctx, pl, name, obj, body, nopts)
	}
	if err != nil {
		return meta.Object{}, fmt.Errorf("put %q: %w", name.Object, belowDecision(err))
	}
	p.releaseSegments(ctx, name, res.Previous, &res.Object)
	if err := listing.settle(ctx, res.Object.Listed(name.Object), false); err != nil {
		return meta.Object{}, fmt.Errorf("put %q: %w", name.Object, err)
	}
	return served(res.Object), nil
}

// sole reports whether no process but this one writes pl's primaries (nodeclient.Sole).
func sole(pl *placement) bool {
	for _, t := range pl.primaries {
		if s, ok := t.client.(nodeclient.Sole); !ok || !s.Sole() {
			return false
		}
	}
	return len(pl.primaries) > 0
}

// prepare makes obj what a PUT with opts sends the nodes.
func prepare(obj *meta.Object, opts PutOptions) {
	obj.Timestamp = opts.Timestamp
	if obj.Timestamp == 0 {
		obj.Timestamp = meta.Now()
	}
	// What an archive says of itself must not come along with an object copied from an
	// erasure-coded container: it would change the size this one is served with.
	obj.SysMeta = meta.WithoutEC(obj.SysMeta)
	if obj.Manifest != nil {
		obj.SysMeta = withKey(obj.SysMeta, meta.SysManifestETag, obj.ETag)
		obj.Size, obj.ETag = 0, ""
	}
}

// served is an object as a node stored it, as PutObject returns it.
func served(o meta.Object) meta.Object {
	out := o.AsServed()
	out.SysMeta = meta.WithoutEC(out.SysMeta)
	return out
}

// HeadObject returns an object's metadata.
func (p *Proxy) HeadObject(ctx context.Context, name meta.ObjectName) (meta.Object, error) {
	return p.headObject(ctx, name, nodeclient.HeadOptions{})
}

// HeadObjectBrief is HeadObject for the HEADs that need only what clients see: a long
// manifest comes without its segment list (Summary instead of Manifest).
func (p *Proxy) HeadObjectBrief(ctx context.Context, name meta.ObjectName) (meta.Object, error) {
	return p.headObject(ctx, name, nodeclient.HeadOptions{Brief: true})
}

func (p *Proxy) headObject(ctx context.Context, name meta.ObjectName, opts nodeclient.HeadOptions) (meta.Object, error) {
	ctx, pl, err := p.placeObject(ctx, name, false)
	if err != nil {
		return meta.Object{}, err
	}
	if pl.scheme != nil {
		return p.headEC(ctx, pl, name, opts)
	}
	o, err := freshRead(ctx, pl, name, true, func(ctx context.Context, t target) (meta.Object, error) {
		return t.client.HeadObject(ctx, t.dev.Name, pl.part, name, opts)
	}, func(o meta.Object) meta.Object { return o }, func(meta.Object) {}, nil)
	if err != nil {
		return o, err
	}
	return o.AsServed(), nil
}

// GetObject opens an object, or one range of it (nil for all of it). Manifest objects read as
// the concatenation of their segments.
func (p *Proxy) GetObject(ctx context.Context, name meta.ObjectName, rng *meta.Range) (*ObjectReader, error) {
	// One read: a node answers a manifest whole whatever range is asked (nodeclient's
	// contract), and the range is then resolved against the manifest's served size.
	r, err := p.getStored(ctx, name, rng)
	if err != nil {
		return nil, err
	}
	if r.Object.Manifest == nil {
		return r, nil
	}
	r.Close()
	o := r.Object.AsServed()
	off, n := int64(0), o.Size
	if rng != nil {
		if off, n, err = rng.Resolve(o.Size); err != nil {
			return nil, err
		}
	}
	return p.openManifest(ctx, name, o, off, n), nil
}

func (p *Proxy) getStored(ctx context.Context, name meta.ObjectName, rng *meta.Range) (*ObjectReader, error) {
	ctx, pl, err := p.placeObject(ctx, name, false)
	if err != nil {
		return nil, err
	}
	if pl.scheme != nil {
		if rng == nil {
			if r, ok := p.getECWhole(ctx, pl, name); ok {
				return r, nil
			}
		}
		return p.getEC(ctx, pl, name, rng)
	}
	var served target
	r, err := freshRead(ctx, pl, name, false, func(ctx context.Context, t target) (*nodeclient.ObjectReader, error) {
		served = t
		return t.client.GetObject(ctx, t.dev.Name, pl.part, name, rng)
	}, func(r *nodeclient.ObjectReader) meta.Object { return r.Object }, func(r *nodeclient.ObjectReader) { r.Close() },
		func(r *nodeclient.ObjectReader) bool { return r.Alone })
	if err != nil {
		return nil, err
	}
	body := r.ReadCloser
	if len(pl.primaries) > 1 && r.Length > 0 {
		body = &resumingReader{ctx: ctx, pl: pl, name: name, obj: r.Object, pos: r.Offset, end: r.Offset + r.Length,
			cur: r.ReadCloser, tried: []target{served}}
	}
	return &ObjectReader{Object: r.Object, Offset: r.Offset, Length: r.Length, ReadCloser: body}, nil
}

// resumingReader is an object's body that survives the death of the node sending it: when a
// read fails before the end, the rest is asked of another replica holding the same version
// (Swift's proxy resumes GETs the same way), so that the client sees no error.
type resumingReader struct {
	ctx      context.Context
	pl       *placement
	name     meta.ObjectName
	obj      meta.Object
	pos, end int64 // the next byte to send and the end of the range (exclusive)
	cur      io.ReadCloser
	tried    []target
}

func (r *resumingReader) Read(b []byte) (int, error) {
	for {
		n, err := r.cur.Read(b)
		r.pos += int64(n)
		if err == nil || (err == io.EOF && r.pos == r.end) {
			return n, err
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if r.ctx.Err() != nil || !r.resume(err) {
			return n, err
		}
		if n > 0 {
			return n, nil
		}
	}
}

// resume opens the rest of the range on a replica not tried yet that has the same version.
func (r *resumingReader) resume(cause error) bool {
	r.cur.Close()
	r.pl.p.health.failed(r.tried[len(r.tried)-1].dev.Node)
	rng := &meta.Range{Start: r.pos, End: r.end - 1}
	next := func() (target, bool) {
		for _, t := range r.pl.readOrder() {
			if !slices.ContainsFunc(r.tried, func(o target) bool { return o.dev == t.dev }) {
				return t, true
			}
		}
		return r.pl.handoff(-1)
	}
	for {
		t, ok := next()
		if !ok {
			return false
		}
		r.tried = append(r.tried, t)
		if t.err != nil {
			continue
		}
		o, err := t.client.GetObject(r.ctx, t.dev.Name, r.pl.part, r.name, rng)
		if err != nil {
			continue
		}
		if o.Object.Timestamp != r.obj.Timestamp || o.Object.ETag != r.obj.ETag || o.Offset != r.pos {
			o.Close() // another version: its bytes cannot continue these
			continue
		}
		r.pl.p.log.Info("object read resumed on another replica", "object", r.name.Object, "at", r.pos, "node", t.dev.Node, "after", cause)
		r.cur = o.ReadCloser
		return true
	}
}

func (r *resumingReader) Close() error { return r.cur.Close() }

// DeleteObject deletes an object (meta.ErrNotFound if there is none), and the segments of a
// manifest that owns them.
func (p *Proxy) DeleteObject(ctx context.Context, name meta.ObjectName) error {
	return p.DeleteObjectIf(ctx, name, meta.Precondition{})
}

// DeleteObjectIf is DeleteObject when cond holds for the current version, decided by each
// replica in its commit (meta.ErrPreconditionFailed otherwise).
func (p *Proxy) DeleteObjectIf(ctx context.Context, name meta.ObjectName, cond meta.Precondition) error {
	return p.deleteObject(ctx, name, meta.Now(), cond, true)
}

// DeleteObjectAt is DeleteObjectIf with the tombstone's timestamp given: the expirer deletes an
// object as of its expiry time, as Swift's does, so that any write stamped after the expiry
// wins over the delete whichever commits first.
func (p *Proxy) DeleteObjectAt(ctx context.Context, name meta.ObjectName, now meta.Timestamp, cond meta.Precondition) error {
	return p.deleteObject(ctx, name, now, cond, false)
}

// deleteObject is DeleteObjectAt; restamp says that now is the proxy's clock, not the
// caller's: a plain delete refused for a decision above it (meta.ErrDecidedAbove) is then made
// again at a later time, after that decision, as it must be ordered.
func (p *Proxy) deleteObject(ctx context.Context, name meta.ObjectName, now meta.Timestamp, cond meta.Precondition, restamp bool) error {
	ctx, pl, err := p.placeObject(ctx, name, false)
	if err != nil {
		return fmt.Errorf("delete %q: %w", name.Object, err)
	}
	listing := p.listingFor(name, pl)
	var prev meta.Object
	if !cond.IsZero() && pl.ring.Replicas() > 1 {
		var at meta.Timestamp
		prev, at, err = p.deleteDecided(ctx, pl, name, now, cond, func(t target) nodeclient.DeleteOptions {
			return nodeclient.DeleteOptions{Containers: listing.to(t.replica), Listed: listing.listed}
		})
		if !errors.Is(err, ErrNoRegisters) {
			if err != nil {
				return fmt.Errorf("delete %q: %w", name.Object, err)
			}
			p.releaseSegments(ctx, name, &prev, nil)
			if err := listing.settleDelete(ctx, at); err != nil {
				return fmt.Errorf("delete %q: %w", name.Object, err)
			}
			return nil
		}
	}
	var mu sync.Mutex // replicas answer concurrently
	undecided := !sole(pl)
	for attempt := 0; ; attempt++ {
		listing.again()
		// A replica's not found is a tombstone committed where there was nothing to delete
		// (with a condition, it is the condition's answer).
		var committed error
		if cond.IsZero() {
			committed = meta.ErrNotFound
		}
		err = pl.fanOutCommitting(ctx, func(ctx context.Context, t target) error {
			opts := nodeclient.DeleteOptions{If: cond, Containers: listing.to(t.replica), Listed: listing.listed, Undecided: undecided}
			o, err := t.client.DeleteObject(ctx, t.dev.Name, pl.part, name, now, opts)
			if err == nil {
				mu.Lock()
				prev = o
				mu.Unlock()
			}
			return err
		}, committed)
		if !restamp || attempt == 2 || !errors.Is(err, meta.ErrDecidedAbove) {
			break
		}
		now = meta.Now() // past the decision: the refusal moved the clock (noteFailure)
	}
	if err != nil {
		return fmt.Errorf("delete %q: %w", name.Object, belowDecision(err))
	}
	p.releaseSegments(ctx, name, &prev, nil)
	if err := listing.settleDelete(ctx, now); err != nil {
		return fmt.Errorf("delete %q: %w", name.Object, err)
	}
	return nil
}

// PostObject replaces an object's content type, headers and user metadata (keeping its bytes)
// and merges update.SysMeta.
func (p *Proxy) PostObject(ctx context.Context, name meta.ObjectName, update meta.Object) (meta.Object, error) {
	return p.PostObjectIf(ctx, name, update, 0)
}

// PostObjectIf is PostObject as a compare-and-swap: it changes the version whose timestamp is
// seen (the one the caller read and decided on), or fails with meta.ErrPreconditionFailed when
// the object changed since (seen 0: any version). Object Lock's retention changes need it: two
// racing changes must not both pass their check against what was there before.
func (p *Proxy) PostObjectIf(ctx context.Context, name meta.ObjectName, update meta.Object, seen meta.Timestamp) (meta.Object, error) {
	ctx, pl, err := p.placeObject(ctx, name, false)
	if err != nil {
		return meta.Object{}, fmt.Errorf("post %q: %w", name.Object, err)
	}
	cond := meta.Precondition{IfTimestamp: seen}
	if len(pl.primaries) > 1 {
		// A POST makes a new version of the bytes a replica holds. One that missed the newest
		// PUT (it was down, and a handoff took it) must not: its old bytes, newer by the POST's
		// timestamp, would win everywhere once replicated. So the POST names the newest version
		// the replicas hold, and a replica with another refuses; replication brings it the
		// newest, POSTed, version from the others.
		newestOf := p.newestVersion
		if pl.scheme != nil {
			newestOf = p.newestEC
		}
		newest, err := newestOf(ctx, pl, name)
		if err != nil {
			return meta.Object{}, fmt.Errorf("post %q: %w", name.Object, err)
		}
		if seen != 0 && newest != seen {
			return meta.Object{}, fmt.Errorf("post %q: changed since it was read: %w", name.Object, meta.ErrPreconditionFailed)
		}
		cond.IfTimestamp = newest
	}
	update.Timestamp = meta.Now()
	update.SysMeta = meta.WithoutEC(update.SysMeta) // each archive keeps its own
	listing := p.listingFor(name, pl)
	var out meta.Object
	if seen != 0 && pl.ring.Replicas() > 1 {
		// A compare-and-swap: the name's register decides between racing ones (decided.go).
		out, err = p.postDecided(ctx, pl, name, update, seen, func(t target) nodeclient.PostOptions {
			return nodeclient.PostOptions{Containers: listing.to(t.replica), Listed: listing.listed, If: cond}
		})
		if !errors.Is(err, ErrNoRegisters) {
			if err != nil {
				return meta.Object{}, fmt.Errorf("post %q: %w", name.Object, err)
			}
			if err := listing.settle(ctx, out.Listed(name.Object), false); err != nil {
				return meta.Object{}, fmt.Errorf("post %q: %w", name.Object, err)
			}
			out = out.AsServed()
			out.SysMeta = meta.WithoutEC(out.SysMeta)
			return out, nil
		}
	}
	var mu sync.Mutex // replicas answer concurrently
	undecided := !sole(pl)
	err = pl.fanOut(ctx, func(ctx context.Context, t target) error {
		o, err := t.client.PostObject(ctx, t.dev.Name, pl.part, name, update, nodeclient.PostOptions{Containers: listing.to(t.replica), Listed: listing.listed, If: cond, Undecided: undecided})
		if err == nil {
			mu.Lock()
			out = o
			mu.Unlock()
		}
		return err
	})
	if errors.Is(err, meta.ErrPreconditionFailed) && seen != 0 {
		return meta.Object{}, fmt.Errorf("post %q: changed since it was read: %w", name.Object, err)
	}
	if errors.Is(err, meta.ErrPreconditionFailed) {
		// Most replicas hold an older version than the newest: nothing to do but wait for
		// replication to bring it to them.
		return meta.Object{}, fmt.Errorf("post %q: too few replicas hold the newest version yet: %w", name.Object, meta.ErrUnavailable)
	}
	if err != nil {
		return meta.Object{}, fmt.Errorf("post %q: %w", name.Object, belowDecision(err))
	}
	if err := listing.settle(ctx, out.Listed(name.Object), false); err != nil {
		return meta.Object{}, fmt.Errorf("post %q: %w", name.Object, err)
	}
	out = out.AsServed()
	out.SysMeta = meta.WithoutEC(out.SysMeta)
	return out, nil
}

// newestVersion returns the timestamp of the newest version of an object that a quorum of its
// replicas (handoffs standing in for failed primaries) answers for: ErrNotFound when none
// holds it.
func (p *Proxy) newestVersion(ctx context.Context, pl *placement, name meta.ObjectName) (meta.Timestamp, error) {
	newest, err := p.newestHeld(ctx, pl, name)
	if err != nil {
		return 0, err
	}
	if newest == nil || newest.Deleted {
		return 0, fmt.Errorf("%q: %w", name.Object, meta.ErrNotFound)
	}
	return newest.Timestamp, nil
}

// releaseSegments deletes the segments a replaced or deleted manifest owned, except those the
// new version still uses, once the grace period has passed: a download of the old version
// opens each segment only when it reaches it. Failures (and a crash before the deletion) leave
// garbage, never damage, so they are only logged.
func (p *Proxy) releaseSegments(ctx context.Context, name meta.ObjectName, old, current *meta.Object) {
	if old == nil || old.Manifest == nil || old.SysMeta[SysOwnsSegments] == "" {
		return
	}
	var doomed []meta.ObjectName
	for _, s := range old.Manifest {
		if current != nil && slices.ContainsFunc(current.Manifest, func(c meta.Segment) bool { return c.Container == s.Container && c.Object == s.Object }) {
			continue
		}
		doomed = append(doomed, meta.ObjectName{Account: name.Account, Container: s.Container, Object: s.Object})
	}
	release := func() {
		// The request that replaced the manifest is long answered: its context is not ours.
		ctx := context.WithoutCancel(ctx)
		for _, seg := range doomed {
			if err := p.DeleteObject(ctx, seg); err != nil && !errors.Is(err, meta.ErrNotFound) {
				p.log.Warn("cannot delete segment of a replaced manifest", "container", seg.Container, "segment", seg.Object, "err", err)
			}
		}
	}
	if p.grace < 0 {
		release()
		return
	}
	p.later.after(p.grace, release)
}

// releaser runs deferred segment deletions, and all that remain at Close.
type releaser struct {
	mu      sync.Mutex
	pending map[*time.Timer]func()
	closed  bool
}

func (r *releaser) after(d time.Duration, f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		go f()
		return
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		r.mu.Lock()
		_, mine := r.pending[t] // flush may have stopped and run it already
		delete(r.pending, t)
		r.mu.Unlock()
		if mine {
			f()
		}
	})
	r.pending[t] = f
}

// flush runs every pending deletion now and makes later ones immediate.
func (r *releaser) flush() {
	r.mu.Lock()
	r.closed = true
	var run []func()
	for t, f := range r.pending {
		if t.Stop() { // else it fired, and its callback runs f
			run = append(run, f)
			delete(r.pending, t)
		}
	}
	r.mu.Unlock()
	for _, f := range run {
		f()
	}
}

func withKey(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for mk, mv := range m {
		out[mk] = mv
	}
	out[k] = v
	return out
}

// openManifest returns a reader over bytes [off, off+n) of a manifest's segments.
func (p *Proxy) openManifest(ctx context.Context, name meta.ObjectName, o meta.Object, off, n int64) *ObjectReader {
	return &ObjectReader{
		Object: o, Offset: off, Length: n,
		ReadCloser: &segmentReader{ctx: ctx, p: p, account: name.Account, segs: o.Manifest, off: off, left: n},
	}
}

// MaxManifestDepth bounds the nesting of manifests whose segments are manifests (Swift's
// max_slo_recursion_depth): a read that goes deeper fails with ErrManifestDepth.
const MaxManifestDepth = 10

// ErrManifestDepth is the error of a read through more than MaxManifestDepth nested manifests.
var ErrManifestDepth = errors.New("max recursion depth of nested manifests exceeded")

// segmentReader streams a byte range across a manifest's segments, opening each segment only
// when the read reaches it and checking that it is still the segment the manifest names. A
// segment may select a range of its object, hold its bytes inline, or be a manifest itself,
// which is read by a nested segmentReader.
type segmentReader struct {
	ctx     context.Context
	p       *Proxy
	account string
	segs    []meta.Segment
	depth   int   // manifests above this one
	off     int64 // offset still to skip into segs[0]
	left    int64
	cur     io.ReadCloser
	curLeft int64
}

// open makes r.cur the reader of want bytes from offset off of segment s.
func (r *segmentReader) open(s meta.Segment, off, want int64) error {
	if s.Data != nil {
		r.cur = io.NopCloser(bytes.NewReader(s.Data[off : off+want]))
		return nil
	}
	if s.Ranged {
		off += s.Offset
	}
	name := meta.ObjectName{Account: r.account, Container: s.Container, Object: s.Object}
	seg, err := r.p.getStored(r.ctx, name, &meta.Range{Start: off, End: off + want - 1})
	if err != nil {
		return fmt.Errorf("segment %s/%s: %w", s.Container, s.Object, err)
	}
	got := seg.Object
	if s.SubManifest {
		seg.Close() // a node answers a manifest with its record only
		if got.Manifest == nil {
			return fmt.Errorf("segment %s/%s is no longer a manifest: %w", s.Container, s.Object, meta.ErrCorrupt)
		}
		if r.depth+1 >= MaxManifestDepth {
			return fmt.Errorf("segment %s/%s: %w", s.Container, s.Object, ErrManifestDepth)
		}
		got = got.AsServed()
	}
	if got.Size != s.Size || (s.ETag != "" && got.ETag != s.ETag) {
		if !s.SubManifest {
			seg.Close()
		}
		return fmt.Errorf("segment %s/%s changed since the manifest was written: %w", s.Container, s.Object, meta.ErrCorrupt)
	}
	if s.SubManifest {
		r.cur = &segmentReader{ctx: r.ctx, p: r.p, account: r.account, segs: got.Manifest, depth: r.depth + 1, off: off, left: want}
	} else {
		r.cur = seg
	}
	return nil
}

func (r *segmentReader) Read(b []byte) (int, error) {
	for r.cur == nil {
		if r.left == 0 {
			return 0, io.EOF
		}
		if len(r.segs) == 0 {
			return 0, fmt.Errorf("manifest shorter than its size: %w", meta.ErrCorrupt)
		}
		s := r.segs[0]
		r.segs = r.segs[1:]
		if l := s.Len(); r.off >= l {
			r.off -= l
			continue
		}
		want := min(s.Len()-r.off, r.left)
		if err := r.open(s, r.off, want); err != nil {
			return 0, err
		}
		r.curLeft, r.off = want, 0
	}
	if int64(len(b)) > r.curLeft {
		b = b[:r.curLeft]
	}
	n, err := r.cur.Read(b)
	r.curLeft -= int64(n)
	r.left -= int64(n)
	if r.curLeft == 0 {
		r.cur.Close()
		r.cur = nil
		if err == io.EOF {
			err = nil
		}
	} else if err == io.EOF {
		err = fmt.Errorf("segment ended early: %w", io.ErrUnexpectedEOF)
	}
	return n, err
}

func (r *segmentReader) Close() error {
	if r.cur != nil {
		return r.cur.Close()
	}
	return nil
}

// ReadSegments opens bytes [off, off+n) of the concatenation of segs, objects of account, as a
// manifest's read does (each segment checked to be the one named, by size and ETag when given);
// o describes the whole. It serves manifests kept outside the object record (Swift's dynamic
// large objects, whose segments are listed at read time).
func (p *Proxy) ReadSegments(ctx context.Context, account string, o meta.Object, segs []meta.Segment, off, n int64) *ObjectReader {
	o.Manifest = segs
	return p.openManifest(ctx, meta.ObjectName{Account: account}, o, off, n)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

// errNoHandoff wraps a replica's failure after its body began: the stream has moved past what
// a handoff could be given, so none replaces it (it counts as an answer to withHandoffs).
type errNoHandoff struct{ err error }

func (e errNoHandoff) Error() string { return e.err.Error() }
func (e errNoHandoff) Unwrap() error { return e.err }
