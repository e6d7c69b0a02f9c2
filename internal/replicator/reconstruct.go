package replicator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/ring"
)

// ecPeer is another primary of a partition, as a pass sees it.
type ecPeer struct {
	index   int
	dev     ring.Device
	client  nodeclient.Client
	rep     nodeclient.Replication
	digests map[uint32]uint64 // nil: it did not answer
}

// dial reaches a device's node for replication (its replication address, when it has one).
func (r *Reconstructor) dial(d ring.Device) (nodeclient.Client, nodeclient.Replication, error) {
	addr := d.Node
	if d.ReplicationNode != "" {
		addr = d.ReplicationNode
	}
	c, err := r.cfg.Dialer.Dial(addr)
	if err != nil {
		return nil, nil, fmt.Errorf("node %s: %w", addr, err)
	}
	rep, ok := c.(nodeclient.Replication)
	if !ok {
		return nil, nil, fmt.Errorf("node %s does not replicate", addr)
	}
	return c, rep, nil
}

// rebuild brings primary me of a partition up to date (pull), and rebuilds the archives of
// the primaries that hold nothing of it and have no nearer primary before them that does.
func (r *Reconstructor) rebuild(ctx context.Context, j ecJob, primaries []ring.Device, me int) (ReconstructStats, error) {
	var st ReconstructStats
	pp := j.ring.Ring.PartPower
	mine, err := r.cfg.Node.PartitionDigests(ctx, j.device, pp, j.part)
	if err != nil {
		return st, fmt.Errorf("local digests: %w", err)
	}
	var failed error
	peers := make([]*ecPeer, len(primaries))
	for i, d := range primaries {
		if i == me {
			continue
		}
		p := &ecPeer{index: i, dev: d}
		peers[i] = p
		c, rep, err := r.dial(d)
		if err == nil {
			p.digests, err = rep.PartitionDigests(ctx, d.Name, pp, j.part)
		}
		if err != nil {
			p.digests = nil
			failed = fmt.Errorf("digests of %s/%s: %w", d.Node, d.Name, err)
			continue
		}
		p.client, p.rep = c, rep
	}
	if ctx.Err() != nil {
		return st, ctx.Err()
	}
	if err := r.pull(ctx, j, primaries, me, mine, peers, &st); err != nil {
		failed = err
	}
	if len(mine) > 0 {
		for i, p := range peers {
			if p == nil || p.digests == nil || len(p.digests) != 0 || responsible(i, peers) != me {
				continue
			}
			if err := r.fillEmpty(ctx, j, primaries, p, &st); err != nil {
				failed = err
			}
		}
	}
	return st, failed
}

// responsible returns the primary that rebuilds the archives of empty primary e: the nearest
// before it, in ring order and around, that holds data of the partition (peers[i] nil is the
// device whose pass this is, which does).
func responsible(e int, peers []*ecPeer) int {
	n := len(peers)
	for k := 1; k < n; k++ {
		i := (e - k + n) % n
		if p := peers[i]; p == nil || len(p.digests) > 0 {
			return i
		}
	}
	return -1
}

// pull takes from the other primaries what this device lacks: their newest versions in the
// suffixes whose digests differ from its own, where it holds nothing, holds older or holds
// flagged corrupt (WantVersions says which): tombstones as they are, archives rebuilt for its
// fragment index.
func (r *Reconstructor) pull(ctx context.Context, j ecJob, primaries []ring.Device, me int, mine map[uint32]uint64, peers []*ecPeer, st *ReconstructStats) error {
	pp := j.ring.Ring.PartPower
	newest := map[meta.ObjectName]nodeclient.ObjectVersion{}
	var failed error
	for _, p := range peers {
		if p == nil || p.digests == nil {
			continue
		}
		var suffixes []uint32
		for s, d := range p.digests {
			if mine[s] != d {
				suffixes = append(suffixes, s)
			}
		}
		if len(suffixes) == 0 {
			continue
		}
		slices.Sort(suffixes)
		vs, err := p.rep.PartitionVersions(ctx, p.dev.Name, pp, j.part, suffixes)
		if err != nil {
			failed = fmt.Errorf("versions of %s/%s: %w", p.dev.Node, p.dev.Name, err)
			continue
		}
		for _, v := range vs {
			if cur, ok := newest[v.Name]; !ok || v.Timestamp > cur.Timestamp {
				newest[v.Name] = v
			}
		}
	}
	if len(newest) == 0 {
		return failed
	}
	cand := slices.Collect(maps.Values(newest))
	slices.SortFunc(cand, func(a, b nodeclient.ObjectVersion) int { return strings.Compare(a.Name.Object, b.Name.Object) })
	want, err := r.cfg.Node.WantVersions(ctx, j.device, cand)
	if err != nil {
		return fmt.Errorf("local wants: %w", err)
	}
	self := ecDest{client: r.cfg.Node, dev: primaries[me], local: true}
	for _, i := range want {
		if err := r.restore(ctx, j, primaries, me, self, cand[i], st); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			failed = err
		}
	}
	return failed
}

// fillEmpty rebuilds, for a primary that holds nothing of the partition, the archive of its
// fragment index of every version this device holds (tombstones as they are).
func (r *Reconstructor) fillEmpty(ctx context.Context, j ecJob, primaries []ring.Device, p *ecPeer, st *ReconstructStats) error {
	held, err := r.cfg.Node.PartitionVersions(ctx, j.device, j.ring.Ring.PartPower, j.part, nil)
	if err != nil {
		return fmt.Errorf("local versions: %w", err)
	}
	want, err := p.rep.WantVersions(ctx, p.dev.Name, held)
	if err != nil {
		return fmt.Errorf("asking %s/%s: %w", p.dev.Node, p.dev.Name, err)
	}
	r.log.Info("rebuilding the archives of a primary that holds nothing of a partition", "partition", j.part, "node", p.dev.Node, "device", p.dev.Name, "versions", len(want))
	dest := ecDest{client: p.client, dev: p.dev}
	var failed error
	for _, i := range want {
		if err := r.restore(ctx, j, primaries, p.index, dest, held[i], st); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			failed = err
		}
	}
	return failed
}

// ecDest is where a restored archive goes.
type ecDest struct {
	client nodeclient.Client
	dev    ring.Device
	local  bool // this node's own device
}

// ecSource is an archive a survey found.
type ecSource struct {
	client nodeclient.Client
	dev    ring.Device
	obj    meta.Object
	arc    meta.ECArchive
}

// restore makes dest hold version v, as archive idx: a tombstone as it is; an archive copied
// whole where one of v's bytes with that index exists (a handoff's, or dest's own under older
// metadata), else decoded from k archives of v's bytes. A version of which fewer than k
// archives exist is counted and left.
func (r *Reconstructor) restore(ctx context.Context, j ecJob, primaries []ring.Device, idx int, dest ecDest, v nodeclient.ObjectVersion, st *ReconstructStats) error {
	if v.Deleted {
		_, err := dest.client.DeleteObject(ctx, dest.dev.Name, j.part, v.Name, v.Timestamp, nodeclient.DeleteOptions{})
		if err != nil && !errors.Is(err, meta.ErrNotFound) && !errors.Is(err, meta.ErrConflict) {
			return fmt.Errorf("tombstone of %q on %s/%s: %w", v.Name.Object, dest.dev.Node, dest.dev.Name, err)
		}
		st.Tombstones++
		r.metrics.tombstones.Inc()
		return nil
	}
	sources := r.survey(ctx, j, primaries, dest, v.Name)
	var target *ecSource
	for i, s := range sources {
		if s.obj.Timestamp == v.Timestamp {
			target = &sources[i]
			break
		}
	}
	if target == nil {
		return nil // overwritten or deleted since it was listed: the next pass sees what is there
	}
	scheme, err := r.scheme(target.arc.K, target.arc.M, target.arc.SegmentSize)
	if err != nil {
		return fmt.Errorf("%q: %w", v.Name.Object, err)
	}
	obj := target.obj
	obj.SysMeta = maps.Clone(obj.SysMeta)
	arc := target.arc
	arc.Index = idx
	arc.Set(obj.SysMeta)
	obj.Size, obj.ETag = scheme.ArchiveSize(arc.Size), ""
	if obj.IsManifest() {
		obj.Size = 0
	}
	put := func(body io.Reader) error {
		_, err := dest.client.PutObject(ctx, dest.dev.Name, j.part, v.Name, obj, body, nodeclient.PutOptions{})
		if err != nil && !errors.Is(err, meta.ErrConflict) { // a newer one, or another restore of it
			return fmt.Errorf("archive %d of %q to %s/%s: %w", idx, v.Name.Object, dest.dev.Node, dest.dev.Name, err)
		}
		return nil
	}
	done := func(how string, n *int64) {
		*n++
		st.Bytes += obj.Size
		r.metrics.fragments.WithLabelValues(how).Inc()
		r.metrics.bytes.Add(float64(obj.Size))
	}
	if obj.IsManifest() || arc.Size == 0 {
		// Nothing but metadata: any archive's, as this index's.
		if err := put(nil); err != nil {
			return err
		}
		done("copied", &st.Copied)
		return nil
	}
	byIndex := map[int]ecSource{}
	for _, s := range sources {
		if s.arc.SameData(target.arc) {
			if _, dup := byIndex[s.arc.Index]; !dup {
				byIndex[s.arc.Index] = s
			}
		}
	}
	if dest.local {
		// The device's own archive of these bytes, under metadata a POST changed since.
		if o, err := r.cfg.Node.HeadObject(ctx, dest.dev.Name, j.part, v.Name, nodeclient.HeadOptions{}); err == nil {
			if a, ok := o.ECArchive(); ok && a.Index == idx && a.SameData(target.arc) {
				byIndex[idx] = ecSource{client: r.cfg.Node, dev: dest.dev, obj: o, arc: a}
			}
		}
	}
	if whole, ok := byIndex[idx]; ok {
		src, err := whole.client.GetObject(ctx, whole.dev.Name, j.part, v.Name, nil)
		if err == nil {
			err = put(&meteredReader{r: src, ctx: ctx, limit: r.limit})
			src.Close()
			if err == nil {
				done("copied", &st.Copied)
				return nil
			}
		}
		r.log.Debug("copying an archive failed; rebuilding it", "object", v.Name.Object, "from", whole.dev.Node, "err", err)
		delete(byIndex, idx)
	}
	delete(byIndex, idx)
	if len(byIndex) < arc.K {
		st.Unrebuildable++
		r.metrics.lost.Inc()
		r.log.Warn("fewer archives than data fragments: cannot rebuild", "object", v.Name.Object, "container", v.Name.Container,
			"timestamp", v.Timestamp, "archives", len(byIndex), "k", arc.K)
		return nil
	}
	readers := make([]io.Reader, scheme.Fragments())
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	opened := 0
	for i := 0; i < scheme.Fragments() && opened < arc.K; i++ {
		s, ok := byIndex[i]
		if !ok {
			continue
		}
		src, err := s.client.GetObject(ctx, s.dev.Name, j.part, v.Name, nil)
		if err != nil {
			continue
		}
		closers = append(closers, src)
		if a, ok := src.Object.ECArchive(); !ok || !a.SameData(target.arc) || a.Index != i {
			continue
		}
		readers[i] = &meteredReader{r: src, ctx: ctx, limit: r.limit}
		opened++
	}
	if opened < arc.K {
		return fmt.Errorf("%q: %d archives readable of the %d needed", v.Name.Object, opened, arc.K)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(scheme.Reconstruct(pw, readers, arc.Size, idx)) }()
	err = put(pr)
	pr.CloseWithError(errors.New("reconstruction abandoned"))
	if err != nil {
		return err
	}
	done("rebuilt", &st.Rebuilt)
	return nil
}

// survey returns the archives of a name that the partition's primaries (but dest) and first
// handoffs hold: where a restore can read.
func (r *Reconstructor) survey(ctx context.Context, j ecJob, primaries []ring.Device, dest ecDest, name meta.ObjectName) []ecSource {
	devs := slices.Clone(primaries)
	for d := range j.ring.Ring.Handoffs(j.part) {
		if len(devs) == 2*len(primaries) {
			break
		}
		devs = append(devs, d)
	}
	var out []ecSource
	for _, d := range devs {
		if d.Node == dest.dev.Node && d.Name == dest.dev.Name {
			continue
		}
		var c nodeclient.Client = r.cfg.Node
		if d.Node != r.cfg.Self {
			var err error
			if c, _, err = r.dial(d); err != nil {
				continue
			}
		}
		o, err := c.HeadObject(ctx, d.Name, j.part, name, nodeclient.HeadOptions{})
		if err != nil {
			continue
		}
		if a, ok := o.ECArchive(); ok {
			out = append(out, ecSource{client: c, dev: d, obj: o, arc: a})
		}
	}
	return out
}

// revert sends what a handoff device holds of a partition home: each archive to the primary
// of its fragment index, each tombstone to every primary, and removes each version once all
// its destinations hold it (or something newer).
func (r *Reconstructor) revert(ctx context.Context, j ecJob, primaries []ring.Device) (ReconstructStats, error) {
	var st ReconstructStats
	held, err := r.cfg.Node.PartitionVersions(ctx, j.device, j.ring.Ring.PartPower, j.part, nil)
	if err != nil {
		return st, fmt.Errorf("listing the partition: %w", err)
	}
	dest := make([][]int, len(primaries))
	placed := make([]bool, len(held))
	for i, v := range held {
		if v.Deleted {
			for p := range dest {
				dest[p] = append(dest[p], i)
			}
			placed[i] = true
			continue
		}
		o, err := r.cfg.Node.HeadObject(ctx, j.device, j.part, v.Name, nodeclient.HeadOptions{Brief: true})
		if errors.Is(err, meta.ErrNotFound) {
			continue // changed since it was listed
		}
		if err != nil {
			return st, fmt.Errorf("reading %q: %w", v.Name.Object, err)
		}
		a, ok := o.ECArchive()
		if !ok || a.Index >= len(primaries) || o.Timestamp != v.Timestamp {
			if !ok {
				r.log.Warn("a handoff holds an object that is no fragment archive of this policy; left in place", "device", j.device, "object", v.Name.Object, "container", v.Name.Container)
			}
			continue
		}
		dest[a.Index] = append(dest[a.Index], i)
		placed[i] = true
	}
	pending := make([]int, len(held))
	for _, is := range dest {
		for _, i := range is {
			pending[i]++
		}
	}
	var failed error
	for p, is := range dest {
		if len(is) == 0 {
			continue
		}
		d := primaries[p]
		c, rep, err := r.dial(d)
		if err != nil {
			failed = err
			continue
		}
		vs := make([]nodeclient.ObjectVersion, len(is))
		for k, i := range is {
			vs[k] = held[i]
		}
		want, err := rep.WantVersions(ctx, d.Name, vs)
		if err != nil {
			failed = fmt.Errorf("asking %s/%s: %w", d.Node, d.Name, err)
			continue
		}
		wanted := map[int]bool{}
		for _, k := range want {
			wanted[k] = true
		}
		for k, i := range is {
			if wanted[k] {
				if err := r.send(ctx, j, c, d, held[i], &st); err != nil {
					if ctx.Err() != nil {
						return st, ctx.Err()
					}
					failed = err
					continue
				}
			}
			pending[i]--
		}
	}
	left := false
	for i, v := range held {
		if !placed[i] || pending[i] > 0 {
			left = true
			continue
		}
		gone, err := r.cfg.Node.EvictObject(ctx, j.device, v.Name, v.Timestamp)
		if err != nil {
			return st, fmt.Errorf("removing a handoff copy: %w", err)
		}
		if gone {
			st.Evicted++
			r.metrics.evicted.Inc()
		} else {
			left = true // written again meanwhile: the next pass sends it
		}
	}
	if left || failed != nil {
		st.Remaining = 1
	}
	return st, failed
}

// send pushes one version of a handoff's to a primary as it is: a tombstone as a DELETE at its
// timestamp, an archive as a PUT of its bytes and metadata (no listing update).
func (r *Reconstructor) send(ctx context.Context, j ecJob, c nodeclient.Client, d ring.Device, v nodeclient.ObjectVersion, st *ReconstructStats) error {
	if v.Deleted {
		_, err := c.DeleteObject(ctx, d.Name, j.part, v.Name, v.Timestamp, nodeclient.DeleteOptions{})
		if err != nil && !errors.Is(err, meta.ErrNotFound) && !errors.Is(err, meta.ErrConflict) {
			return fmt.Errorf("tombstone of %q to %s/%s: %w", v.Name.Object, d.Node, d.Name, err)
		}
		st.Tombstones++
		r.metrics.tombstones.Inc()
		return nil
	}
	src, err := r.cfg.Node.GetObject(ctx, j.device, j.part, v.Name, nil)
	if errors.Is(err, meta.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the local archive of %q: %w", v.Name.Object, err)
	}
	defer src.Close()
	body := &meteredReader{r: src, ctx: ctx, limit: r.limit}
	if _, err := c.PutObject(ctx, d.Name, j.part, v.Name, src.Object, body, nodeclient.PutOptions{}); err != nil && !errors.Is(err, meta.ErrConflict) {
		return fmt.Errorf("archive of %q to %s/%s: %w", v.Name.Object, d.Node, d.Name, err)
	}
	st.Reverted++
	st.Bytes += body.n
	r.metrics.fragments.WithLabelValues("reverted").Inc()
	r.metrics.bytes.Add(float64(body.n))
	return nil
}
