// Package storage is a storage node: it owns the node's devices (each an LSM, an object engine
// and a listing index on one disk) and serves the object, container and account operations of
// the nodeclient contract on them. In the embedded default the proxy calls it in-process.
package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"github.com/cairn-store/cairn/internal/engine"
	"github.com/cairn-store/cairn/internal/index"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/vfs"
)

// ErrNoDevice is returned for a device this node does not have.
var ErrNoDevice = errors.New("no such device")

// DeviceConfig names one disk of the node.
type DeviceConfig struct {
	Name string
	Dir  string
	// IndexDir is where the device's LSM (object records and listings) lives: Dir/lsm by
	// default, or a directory on a faster device of its own (seed 002).
	IndexDir string
}

// Config configures a Node.
type Config struct {
	Devices []DeviceConfig
	// FS is the file system of every device (vfs.Default unless testing).
	FS vfs.FS
	// InlineThreshold is passed to each engine (0: the engine's default).
	InlineThreshold int64
	// CacheBytes is the LSM block cache per device.
	CacheBytes int64
	Logger     *slog.Logger
	// Address is this node's address as the ring names it: a listing update for one of its
	// own devices is not sent over the network.
	Address string
	// Peers reaches the other storage nodes, for listing updates (nil: a node alone, every
	// address the ring names is its own).
	Peers nodeclient.Dialer
	// UpdaterInterval is how often pending listing updates are resent (default 5s).
	UpdaterInterval time.Duration
	// HashPrefix and HashSuffix are the rings' hash path prefix and suffix: each device keeps
	// its objects in the order of the rings' name hash, so that replication enumerates a
	// partition as a range (engine.Config.NameHash).
	HashPrefix, HashSuffix string
}

// Validate checks the configuration and fills in defaults.
func (c *Config) Validate() error {
	if len(c.Devices) == 0 {
		return errors.New("storage: no devices")
	}
	seen := map[string]bool{}
	for _, d := range c.Devices {
		if d.Name == "" || d.Dir == "" {
			return fmt.Errorf("storage: device %+v needs a name and a directory", d)
		}
		if seen[d.Name] {
			return fmt.Errorf("storage: device %q listed twice", d.Name)
		}
		seen[d.Name] = true
	}
	if c.FS == nil {
		c.FS = vfs.Default
	}
	if c.CacheBytes == 0 {
		c.CacheBytes = 64 << 20
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.UpdaterInterval == 0 {
		c.UpdaterInterval = 5 * time.Second
	}
	return nil
}

// Node serves the devices of one storage node.
type Node struct {
	// set is the node's devices, replaced whole (never changed in place) when devices are
	// added while it runs.
	set   atomic.Pointer[deviceSet]
	addMu sync.Mutex // one AddDevices at a time
	cfg   Config
	log   *slog.Logger
	// The timestamp floor's persister (clock.go), and the highest floor the node's devices
	// held when they opened: a version name minted above it is new (nodeclient Fresh).
	clockStop, clockDone chan struct{}
	freshAbove           atomic.Int64
	address              string
	peers                nodeclient.Dialer
	metrics              nodeMetrics
	// The updater (listing.go): its passes never overlap.
	updaterStop, updaterDone chan struct{}
	updaterMu                sync.Mutex
	fs                       vfs.FS
	status                   statusSources
	// life admits the calls peers make in-process (listing and account updates, registers)
	// until Close, which waits for those in flight before it closes the devices: a peer's
	// updater may still be delivering to a node of the same process that is closing.
	life   sync.RWMutex
	closed bool
	// leases is the node's read-lease state (lease.go), nil until the server wires it.
	leases atomic.Pointer[Leases]
}

// enter admits a call from a peer, unless the node is closed; leave ends it.
func (n *Node) enter() error {
	n.life.RLock()
	if n.closed {
		n.life.RUnlock()
		return fmt.Errorf("storage node closed: %w", meta.ErrUnavailable)
	}
	return nil
}

func (n *Node) leave() { n.life.RUnlock() }

var _ nodeclient.Client = (*Node)(nil)

// deviceSet is the devices a node serves, and those it could not open.
type deviceSet struct {
	devices map[string]*device
	// failed holds the devices that could not be opened, with why: requests for them fail
	// with meta.ErrUnavailable (as Swift answers 507 for an unmounted device) while the
	// node's other devices serve.
	failed map[string]error
}

// devs returns the devices the node serves now (not to be changed).
func (n *Node) devs() map[string]*device { return n.set.Load().devices }

// device is one disk: its LSM, shared by the engine (object records) and the index (listings),
// so that an object and its listing entry commit in one batch.
type device struct {
	dir    string
	db     *pebble.DB
	engine *engine.Engine
	index  *index.Index
	// statsRetry holds the containers whose usage report failed, for the next stats pass.
	statsMu    sync.Mutex
	statsRetry map[[2]string]struct{}
	// floor is the timestamp floor in the device's LSM (clock.go); floorMu orders its writes.
	floor   atomic.Int64
	floorMu sync.Mutex
	// registers orders the messages to each register the device keeps (register.go).
	registers registerLocks
}

// Open opens every device of the node, recovering each from whatever a crash left.
func Open(cfg Config) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, log: cfg.Logger,
		address: cfg.Address, peers: cfg.Peers, metrics: newNodeMetrics(), fs: cfg.FS}
	set := &deviceSet{devices: map[string]*device{}, failed: map[string]error{}}
	errs := n.openDevices(set, cfg.Devices)
	if len(set.devices) == 0 {
		return nil, errors.Join(errs...)
	}
	n.restoreClock(set.devices)
	n.set.Store(set)
	n.persistClock()
	n.clockStop, n.clockDone = make(chan struct{}), make(chan struct{})
	go n.keepClock(n.clockStop, n.clockDone)
	n.updaterStop, n.updaterDone = make(chan struct{}), make(chan struct{})
	go n.runUpdater(cfg.UpdaterInterval, n.updaterStop, n.updaterDone)
	return n, nil
}

// Failed returns the devices that could not be opened, with why.
func (n *Node) Failed() map[string]error { return n.set.Load().failed }

// openDevices opens devices into set (one that fails is recorded as failed).
func (n *Node) openDevices(set *deviceSet, dcs []DeviceConfig) []error {
	var errs []error
	for _, dc := range dcs {
		d, err := openDevice(n.cfg, dc)
		if err != nil {
			err = fmt.Errorf("storage: device %s: %w", dc.Name, err)
			n.log.Error("device not opened; the node serves without it", "device", dc.Name, "err", err)
			set.failed[dc.Name] = err
			errs = append(errs, err)
			continue
		}
		delete(set.failed, dc.Name)
		set.devices[dc.Name] = d
	}
	return errs
}

// AddDevices opens, while the node runs, those of devs it does not serve yet (devices added
// to the rings for it, or that failed to open before), and serves them from then on. Devices
// it serves already are left alone: a device is removed by taking it out of the rings, which
// makes replication empty it.
func (n *Node) AddDevices(devs []DeviceConfig) error {
	n.addMu.Lock()
	defer n.addMu.Unlock()
	cur := n.set.Load()
	var added []DeviceConfig
	for _, dc := range devs {
		if _, ok := cur.devices[dc.Name]; !ok {
			added = append(added, dc)
		}
	}
	if len(added) == 0 {
		return nil
	}
	next := &deviceSet{devices: maps.Clone(cur.devices), failed: maps.Clone(cur.failed)}
	errs := n.openDevices(next, added)
	for _, dc := range added {
		if _, ok := next.devices[dc.Name]; ok {
			n.log.Info("device added while running", "device", dc.Name, "dir", dc.Dir)
		}
	}
	// Before it serves a write: what it holds may be newer than what the node has seen.
	n.restoreClock(next.devices)
	n.set.Store(next)
	return errors.Join(errs...)
}

func openDevice(cfg Config, dc DeviceConfig) (*device, error) {
	if err := vfs.MkdirAllDurable(cfg.FS, dc.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dc.Dir, err)
	}
	lsmDir := dc.IndexDir
	if lsmDir == "" {
		lsmDir = filepath.Join(dc.Dir, "lsm")
	}
	cache := pebble.NewCache(cfg.CacheBytes)
	defer cache.Unref()
	db, err := openIndex(cfg.FS, dc.Dir, lsmDir, func(mustExist bool) (*pebble.DB, error) {
		opts := &pebble.Options{
			FS:               cfg.FS,
			Merger:           index.Merger,
			Cache:            cache,
			MemTableSize:     32 << 20,
			Logger:           pebbleLogger{cfg.Logger.With("device", dc.Name)},
			ErrorIfNotExists: mustExist,
		}
		for i := range opts.Levels {
			// Most PUTs look up a name that does not exist yet; a bloom filter answers that
			// without reading a block of every level.
			opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		}
		engine.TunePebble(opts)
		return pebble.Open(lsmDir, opts)
	})
	if err != nil {
		return nil, err
	}
	ix := index.New(db, cfg.Logger.With("device", dc.Name))
	if err := ix.Upgrade(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("upgrade index: %w", err)
	}
	prefix, suffix := cfg.HashPrefix, cfg.HashSuffix
	eng, err := engine.Open(engine.Config{
		Dir: dc.Dir, FS: cfg.FS, DB: db, InlineThreshold: cfg.InlineThreshold,
		Logger:     cfg.Logger.With("device", dc.Name),
		NameHash:   func(name meta.ObjectName) uint64 { return placementHash(prefix, suffix, name) },
		NameHashID: nameHashID(prefix, suffix),
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open engine: %w", err)
	}
	return &device{dir: dc.Dir, db: db, engine: eng, index: ix, statsRetry: map[[2]string]struct{}{}}, nil
}

// Close closes every device.
func (n *Node) Close() error {
	if n.clockStop != nil {
		close(n.clockStop)
		<-n.clockDone
		n.clockStop = nil
	}
	if n.updaterStop != nil {
		close(n.updaterStop)
		<-n.updaterDone
		n.updaterStop = nil
	}
	n.life.Lock()
	n.closed = true
	n.life.Unlock()
	var errs []error
	for name, d := range n.devs() {
		d.index.Close()
		if err := d.engine.Close(); err != nil {
			errs = append(errs, fmt.Errorf("device %s engine: %w", name, err))
		}
		if err := d.db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("device %s LSM: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

func (n *Node) device(name string) (*device, error) {
	set := n.set.Load()
	d, ok := set.devices[name]
	if !ok {
		if err, failed := set.failed[name]; failed {
			return nil, fmt.Errorf("%w: %w", err, meta.ErrUnavailable)
		}
		return nil, fmt.Errorf("%q: %w", name, ErrNoDevice)
	}
	return d, nil
}

// pebbleLogger sends Pebble's messages to slog.
type pebbleLogger struct{ log *slog.Logger }

func (l pebbleLogger) Infof(format string, args ...any) {
	l.log.Debug(fmt.Sprintf(format, args...), "component", "lsm")
}
func (l pebbleLogger) Errorf(format string, args ...any) {
	l.log.Error(fmt.Sprintf(format, args...), "component", "lsm")
}

// Fatalf stops the process: Pebble calls it when it cannot go on (a WAL write failed) and
// expects it not to return. A panic would not do, because net/http recovers panics in handlers
// and the LSM would then be used in a broken state; a restart recovers it from the WAL.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	l.log.Error("fatal LSM error, exiting: "+fmt.Sprintf(format, args...), "component", "lsm")
	os.Exit(70)
}

// listEntry is the listing entry of an object version, as clients see the object.
func listEntry(name string, o *meta.Object) meta.ListEntry { return o.Listed(name) }

// PutObject stores an object version on a device, and its companion, if any, in the same batch.
func (n *Node) PutObject(ctx context.Context, devName string, part uint32, name meta.ObjectName, obj meta.Object, body io.Reader, opts nodeclient.PutOptions) (nodeclient.PutResult, error) {
	d, err := n.device(devName)
	if err != nil {
		return nodeclient.PutResult{}, err
	}
	defer n.crossRing(ctx, devName, part)()
	var hold usageHold
	defer hold.release()
	main := putListing{n: n, d: d, dev: devName, part: part, name: name, containers: opts.Containers, hold: &hold}
	eopts := engine.PutOptions{BeforeCommit: opts.BeforeCommit, If: opts.If, InBatch: main.inBatch, New: n.isNew(opts, obj.Timestamp)}
	var comp *putListing
	if c := opts.Companion; c != nil {
		comp = &putListing{n: n, d: d, dev: devName, part: part, name: c.Name, containers: c.Containers, hold: &hold}
		eopts.Companion = companion(c, comp)
	}
	// committed ends the write's hold on its name's register (a decided write's fence, an
	// undecided one's admission) once the engine has committed or refused it: from then on
	// the register's checks see the version itself, and the listing updates sent after need
	// not hold up the name's decisions.
	committed := func() {}
	switch {
	case opts.DecidedGen > 0:
		committed = d.fenceDecided(part, name, opts.DecidedGen, &eopts)
	case opts.Undecided:
		// Admitted once the body has arrived, just before the commit: a decision taken
		// while the body streamed is seen.
		before := eopts.BeforeCommit
		var done func()
		eopts.BeforeCommit = func(o *meta.Object) (err error) {
			if before != nil {
				if err := before(o); err != nil {
					return err
				}
			}
			done, err = d.admitUndecided(part, name, o.Timestamp)
			return err
		}
		committed = func() {
			if done != nil {
				done()
			}
		}
	}
	o, err := d.engine.Put(ctx, name, obj, body, eopts)
	committed()
	if err != nil {
		return nodeclient.PutResult{}, err
	}
	hold.release()
	n.sendAll(ctx, d, main.queued, opts.Listed)
	res := nodeclient.PutResult{Object: o, Previous: main.prev}
	if comp != nil {
		ec := eopts.Companion
		res.Companion = nodeclient.CompanionResult{Err: ec.Skipped, Object: ec.Stored, Previous: comp.prev}
		if ec.Skipped == nil {
			n.sendAll(ctx, d, comp.queued, opts.Companion.Listed)
		}
	}
	return res, nil
}

// CommitsCompanions reports that this node commits a PUT's companion in the PUT's batch
// (nodeclient.Companions), on any of its devices.
func (n *Node) CommitsCompanions(string) bool { return true }

var _ nodeclient.Sole = (*Node)(nil)

// Sole reports whether no other process writes the node's devices: it has no peers.
func (n *Node) Sole() bool { return n.alone() }

// companion is the engine's form of a PUT's companion, its listing updates those of l.
func companion(c *nodeclient.Companion, l *putListing) *engine.Companion {
	ec := &engine.Companion{Name: c.Name, Timestamp: c.Timestamp, If: c.If, InBatch: l.inBatch,
		Build: func(obj *meta.Object) (meta.Object, error) { return c.Build(*obj) }}
	if c.Over != "" {
		ec.Admit = func(prev *meta.Object) error {
			if prev != nil && prev.SysMeta[c.Over] != "true" {
				return fmt.Errorf("%q: %w", c.Name.Object, nodeclient.ErrCompanionRefused)
			}
			return nil
		}
	}
	return ec
}

// putListing is the listing side of an object PUT: the updates of its container replicas,
// those of this node's devices added to the object's batch, the others kept to send after.
type putListing struct {
	n          *Node
	d          *device
	dev        string
	part       uint32
	name       meta.ObjectName
	containers []nodeclient.ContainerUpdate
	hold       *usageHold

	queued queued
	prev   *meta.Object // the live version replaced
}

func (l *putListing) inBatch(b *pebble.Batch, o, old *meta.Object) (err error) {
	n, d, name := l.n, l.d, l.name
	if err := n.coverTimestamp(d, o.Timestamp); err != nil {
		return err
	}
	// Before the version is visible: a read lease must not answer it alone unsettled.
	n.markWrote(l.dev, l.part, name, o.Timestamp, false)
	if old != nil && !old.Deleted {
		p := *old
		l.prev = &p
	}
	l.queued, err = n.queueUpdates(b, l.dev, l.containers, pendingUpdate{account: name.Account, cont: name.Container, entry: listEntry(name.Object, o)})
	if err != nil || l.queued.here == nil {
		return err
	}
	l.hold.take(d.index)
	if old != nil && old.Timestamp == 0 {
		// The engine replaces a record it could not read: the listing knows what it was.
		l.prev = nil
		return d.index.PutEntry(b, name.Account, name.Container, listEntry(name.Object, o))
	}
	if !n.alone() {
		// Other devices' object replicas update this listing too: what it holds, not
		// this engine's record, says whether the entry is newer (a listing tombstone
		// included).
		return d.index.PutEntry(b, name.Account, name.Container, listEntry(name.Object, o))
	}
	// The listing entry commits with the record in every batch, and only this engine feeds
	// it, so the version the engine replaces is the entry listed now.
	var listed *meta.ListEntry
	if l.prev != nil {
		e := listEntry(name.Object, l.prev)
		listed = &e
	}
	return d.index.ReplaceEntry(b, name.Account, name.Container, listEntry(name.Object, o), listed)
}

// GetObject opens an object or a range of it.
func (n *Node) GetObject(ctx context.Context, devName string, part uint32, name meta.ObjectName, rng *meta.Range) (*nodeclient.ObjectReader, error) {
	d, err := n.device(devName)
	if err != nil {
		return nil, err
	}
	defer n.crossRing(ctx, devName, part)()
	r, err := d.engine.Get(ctx, name, rng)
	if err != nil {
		return nil, err
	}
	// The lease is asked after the version is read: one that became visible meanwhile has
	// marked its name unsettled by then.
	alone := nodeclient.LeaseRead(ctx) && n.answersAlone(devName, part, name)
	return &nodeclient.ObjectReader{Object: r.Object, Offset: r.Offset, Length: r.Length, Alone: alone, ReadCloser: r.ReadCloser}, nil
}

// HeadObject returns an object's metadata; a deleted object is meta.ErrNotFound.
func (n *Node) HeadObject(ctx context.Context, devName string, part uint32, name meta.ObjectName, opts nodeclient.HeadOptions) (meta.Object, error) {
	d, err := n.device(devName)
	if err != nil {
		return meta.Object{}, err
	}
	defer n.crossRing(ctx, devName, part)()
	stat := d.engine.Stat
	if opts.Brief {
		stat = d.engine.StatBrief
	}
	o, err := stat(ctx, name)
	if err != nil {
		return meta.Object{}, err
	}
	if o.Deleted {
		return meta.Object{}, fmt.Errorf("%q: %w", name.Object, &meta.DeletedError{At: o.Timestamp})
	}
	return o, nil
}

// DeleteObject writes a tombstone and returns the version it removed.
func (n *Node) DeleteObject(ctx context.Context, devName string, part uint32, name meta.ObjectName, ts meta.Timestamp, opts nodeclient.DeleteOptions) (meta.Object, error) {
	d, err := n.device(devName)
	if err != nil {
		return meta.Object{}, err
	}
	defer n.crossRing(ctx, devName, part)()
	var prev meta.Object
	var hold usageHold
	defer hold.release()
	committed, err := d.holdRegister(part, name, ts, opts.DecidedGen, opts.Undecided)
	if err != nil {
		return meta.Object{}, err
	}
	var q queued
	err = d.engine.Delete(ctx, name, ts, engine.DeleteOptions{If: opts.If, InBatch: func(b *pebble.Batch, p *meta.Object) (err error) {
		if p != nil {
			prev = *p
		}
		if err := n.coverTimestamp(d, ts); err != nil {
			return err
		}
		n.markWrote(devName, part, name, ts, true)
		// The listing hears of the delete even when there was nothing to delete here (as
		// Swift's object server updates its container on a 404 DELETE): another replica may
		// have listed the name.
		q, err = n.queueUpdates(b, devName, opts.Containers, pendingUpdate{account: name.Account, cont: name.Container,
			entry: meta.ListEntry{Name: name.Object, Timestamp: ts}, deleted: true})
		if err != nil || q.here == nil {
			return err
		}
		hold.take(d.index)
		if n.alone() {
			// The engine's tombstone refuses older PUTs; the listing needs none of its own.
			return d.index.RemoveEntry(b, name.Account, name.Container, name.Object, ts)
		}
		return d.index.DeleteEntry(b, name.Account, name.Container, name.Object, ts)
	}})
	committed()
	hold.release()
	// Not found means the tombstone was committed all the same (engine.Delete).
	if err == nil || errors.Is(err, meta.ErrNotFound) {
		n.sendAll(ctx, d, q, opts.Listed)
	}
	return prev, err
}

// PostObject rewrites an object's metadata, keeping its bytes.
func (n *Node) PostObject(ctx context.Context, devName string, part uint32, name meta.ObjectName, update meta.Object, opts nodeclient.PostOptions) (meta.Object, error) {
	d, err := n.device(devName)
	if err != nil {
		return meta.Object{}, err
	}
	defer n.crossRing(ctx, devName, part)()
	apply := func(o *meta.Object) error {
		o.ContentType = update.ContentType
		o.Headers = update.Headers
		o.UserMeta = update.UserMeta
		for k, v := range update.SysMeta {
			if o.SysMeta == nil {
				o.SysMeta = map[string]string{}
			}
			o.SysMeta[k] = v
		}
		return nil
	}
	committed, err := d.holdRegister(part, name, update.Timestamp, opts.DecidedGen, opts.Undecided)
	if err != nil {
		return meta.Object{}, err
	}
	var hold usageHold
	defer hold.release()
	var q queued
	o, err := d.engine.UpdateMeta(ctx, name, update.Timestamp, apply, engine.PutOptions{If: opts.If, InBatch: func(b *pebble.Batch, o, _ *meta.Object) (err error) {
		if err := n.coverTimestamp(d, o.Timestamp); err != nil {
			return err
		}
		n.markWrote(devName, part, name, o.Timestamp, false)
		q, err = n.queueUpdates(b, devName, opts.Containers, pendingUpdate{account: name.Account, cont: name.Container, entry: listEntry(name.Object, o)})
		if err != nil || q.here == nil {
			return err
		}
		hold.take(d.index)
		return d.index.PutEntry(b, name.Account, name.Container, listEntry(name.Object, o))
	}})
	committed()
	hold.release()
	if err == nil {
		n.sendAll(ctx, d, q, opts.Listed)
	}
	return o, err
}

// usageHold keeps the index's usage counters from being consolidated while a batch that adds
// to them is being committed (see index.HoldUsage).
type usageHold struct{ done func() }

func (h *usageHold) take(ix *index.Index) {
	if h.done == nil {
		h.done = ix.HoldUsage()
	}
}

func (h *usageHold) release() {
	if h.done != nil {
		h.done()
		h.done = nil
	}
}
