package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Blob is one object of the cluster that several proxies read, and replace by compare-and-swap.
// A cluster's tenant store keeps its state in one (OpenCluster). The server implements it over
// the proxy, so that this package knows nothing of how the cluster stores objects.
type Blob interface {
	// Load returns the object's bytes and version; ErrBlobNotFound when there is none.
	Load(ctx context.Context) (data []byte, version string, err error)
	// Version returns the object's version without its bytes (a HEAD); ErrBlobNotFound when
	// there is none.
	Version(ctx context.Context) (string, error)
	// Store replaces the object with data if its version is still ifVersion, or creates it if
	// ifVersion is "" and there is none, atomically (the condition is checked where the object is
	// committed, not by an earlier read); ErrBlobConflict when the condition fails. It returns
	// the new version. A version is never reused for other bytes.
	Store(ctx context.Context, data []byte, ifVersion string) (version string, err error)
}

// Errors of a cluster's tenant store.
var (
	// ErrBlobNotFound and ErrBlobConflict are what a Blob returns (wrapped) for no object and a
	// failed compare-and-swap.
	ErrBlobNotFound = errors.New("no such object")
	ErrBlobConflict = errors.New("the object changed since it was read")
	// ErrBlobUnknown is what a Blob returns (wrapped) for a write that may or may not have
	// been made (the cluster did not answer in time, or racing writers left its register
	// unable to tell).
	ErrBlobUnknown = errors.New("the write's outcome is unknown")
	// ErrWrongClusterSecret: the tenants object was sealed under another cluster secret.
	ErrWrongClusterSecret = errors.New("the tenants object is sealed with another cluster secret")
	// ErrTenantsCorrupt: the tenants object is not one, or fails authentication (a changed
	// byte, on a disk or on its way).
	ErrTenantsCorrupt = errors.New("the tenants object is damaged or was tampered with")
)

// ClusterConfig is what a cluster's tenant store needs beyond Config.
type ClusterConfig struct {
	// Blob is where the state is kept: the same object for every proxy.
	Blob Blob
	// Secret is the cluster secret (at least MinClusterSecret bytes), the same for every proxy
	// and node. The tenants object is encrypted under a key derived from it, and so is the
	// Swift token key (SwiftTokenKey).
	Secret []byte
	// PollInterval is how often the store asks whether another proxy changed the state (a
	// HEAD; the object is read only when it changed). Default DefaultPollInterval; negative: no
	// polling (tests).
	PollInterval time.Duration
	// MissRefreshGap is how often, at most, a lookup that finds nothing (an unknown access key,
	// Swift user or key) makes the store ask the cluster at once, so that a key made through
	// another proxy works here within about this long. Default DefaultMissRefreshGap.
	MissRefreshGap time.Duration
}

// Defaults of ClusterConfig.
const (
	DefaultPollInterval   = 2 * time.Second
	DefaultMissRefreshGap = 100 * time.Millisecond
)

const (
	// clusterIOTimeout bounds one poll's, or one lookup's, conversation with the cluster.
	clusterIOTimeout = 5 * time.Second
	// clusterFormat is the version of the sealed object's content.
	clusterFormat = 1
	// maxOpenAttempts bounds Open's retries when proxies race to create the object.
	maxOpenAttempts = 4
)

// clusterState is the plaintext of the tenants object. Generation counts changes from the
// object's creation: versions (ETags) are not ordered, and a proxy that reads an older copy
// from a replica that missed a write must not take it for news.
type clusterState struct {
	Format     int    `json:"format"`
	Generation uint64 `json:"generation"`
	Tenants    *state `json:"tenants"`
	// Writes name the last writes (snapshot.writes); absent from objects written before.
	Writes []string `json:"writes,omitempty"`
}

// maxRecentWrites is how many writes a state names: far more than a writer's attempts can
// fall behind (maxUpdateAttempts, each after a reload).
const maxRecentWrites = 4 * maxUpdateAttempts

// clusterSync is a cluster store's side of the cluster: the object, its sealing, and the
// refreshes that bring other proxies' changes.
type clusterSync struct {
	cfg    ClusterConfig
	sealer *sealer

	// missMu serializes refreshes made for lookups: a lookup waiting for one sees its result.
	missMu   sync.Mutex
	lastMiss time.Time

	stopOnce sync.Once
	quit     chan struct{}
	done     chan struct{}
}

// OpenCluster opens a tenant store kept in the cluster, shared by every proxy that opens it on
// the same Blob with the same secret. cfg.Dir is not used; the root key must be given (every
// proxy gets the same one, and it is never stored in the cluster). The first proxy to find no
// tenants object creates it with the root account; proxies racing to do so agree through the
// compare-and-swap. An object sealed under another secret is ErrWrongClusterSecret, and one that
// fails authentication ErrTenantsCorrupt: never an empty store. Close stops the polling.
//
// The server wires a proxy process to it over its proxy (internal/server's NewTenantsBlob):
//
//	keys, err := auth.OpenCluster(ctx,
//		auth.Config{RootAccessKey: cfg.RootAccessKey, RootSecretKey: cfg.RootSecretKey, Logger: cfg.Logger},
//		auth.ClusterConfig{Blob: server.NewTenantsBlob(px), Secret: clusterSecret})
//	if err != nil { ... }
//	defer keys.Close() // once the HTTP server has stopped
//
// and then hands keys to the S3, Swift and admin front ends as the embedded default does with
// auth.Open's store (the Swift front end takes keys.SwiftTokenKey() as its TokenKey, so that
// every proxy accepts the others' tokens). OpenCluster reads the cluster, so it fails while no
// quorum of the object's storage nodes answers: a proxy that starts with its nodes retries.
func OpenCluster(ctx context.Context, cfg Config, cl ClusterConfig) (*Store, error) {
	if err := cfg.validateKeys(); err != nil {
		return nil, err
	}
	if cfg.RootAccessKey == "" {
		return nil, fmt.Errorf("auth: a cluster needs the root key given (the same on every proxy): %w", ErrInvalidKey)
	}
	if cl.Blob == nil {
		return nil, errors.New("auth: no blob for the cluster's tenants")
	}
	if cl.PollInterval == 0 {
		cl.PollInterval = DefaultPollInterval
	}
	if cl.MissRefreshGap <= 0 {
		cl.MissRefreshGap = DefaultMissRefreshGap
	}
	sl, err := newSealer(cl.Secret)
	if err != nil {
		return nil, err
	}
	c := &clusterSync{cfg: cl, sealer: sl, quit: make(chan struct{}), done: make(chan struct{})}
	root := Key{AccessKey: cfg.RootAccessKey, SecretKey: cfg.RootSecretKey, Account: RootAccount, User: RootUser, Admin: true, Root: true}
	s := &Store{cfg: cfg, root: root, backend: c, cluster: c, tokenKey: deriveKey(cl.Secret, labelSwiftTokens, tokenKeyLen)}
	for attempt := 1; ; attempt++ {
		snap, err := s.loadCluster(ctx)
		if errors.Is(err, ErrBlobNotFound) {
			snap, err = s.createCluster(ctx)
			if errors.Is(err, ErrBlobConflict) && attempt < maxOpenAttempts {
				continue // another proxy created it first: read theirs
			}
		}
		if err != nil {
			return nil, err
		}
		s.snap = snap
		break
	}
	if cl.PollInterval > 0 {
		go s.poll()
	} else {
		close(c.done)
	}
	return s, nil
}

// createCluster creates the tenants object with the root account only.
func (s *Store) createCluster(ctx context.Context) (*snapshot, error) {
	st := initialState(s.cfg.Now())
	base := &snapshot{} // no version: create only if there is none
	sv, err := s.cluster.save(ctx, st, base, newWriteID())
	if err != nil {
		return nil, fmt.Errorf("auth: create the cluster's tenants object: %w", err)
	}
	s.cfg.Logger.Info("auth: created the cluster's tenants object")
	snap := newSnapshot(st, s.root, s.cfg.Logger)
	snap.version, snap.generation, snap.writes = sv.version, sv.generation, sv.writes
	return snap, nil
}

// save seals st as the next generation after base's and stores it if the object is still
// base's version.
func (c *clusterSync) save(ctx context.Context, st *state, base *snapshot, id string) (saved, error) {
	gen := base.generation + 1
	writes := append(slices.Clone(base.writes[max(0, len(base.writes)-(maxRecentWrites-1)):]), id)
	plain, err := json.Marshal(clusterState{Format: clusterFormat, Generation: gen, Tenants: st, Writes: writes})
	if err != nil {
		return saved{}, fmt.Errorf("auth: encode the tenants: %w", err)
	}
	version, err := c.cfg.Blob.Store(ctx, c.sealer.seal(plain), base.version)
	if err != nil {
		return saved{}, fmt.Errorf("auth: write the cluster's tenants object: %w", err)
	}
	return saved{version: version, generation: gen, writes: writes}, nil
}

// newWriteID names a write of the tenants object.
func newWriteID() string { return randomString(20, swiftAlphabet) }

// madeBy returns the index in ids of the write the state names among its recent ones, -1
// when it names none of them.
func (s *snapshot) madeBy(ids []string) int {
	for i, id := range ids {
		if slices.Contains(s.writes, id) {
			return i
		}
	}
	return -1
}

// loadCluster reads, opens and checks the tenants object.
func (s *Store) loadCluster(ctx context.Context) (*snapshot, error) {
	data, version, err := s.cluster.cfg.Blob.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("auth: read the cluster's tenants object: %w", err)
	}
	plain, err := s.cluster.sealer.open(data)
	if err != nil {
		return nil, err
	}
	var cs clusterState
	if err := json.Unmarshal(plain, &cs); err != nil {
		return nil, fmt.Errorf("auth: decode the cluster's tenants object: %w", err)
	}
	if cs.Format != clusterFormat || cs.Tenants == nil {
		return nil, fmt.Errorf("auth: the cluster's tenants object has format %d, this binary reads %d", cs.Format, clusterFormat)
	}
	if err := checkState(cs.Tenants, "the cluster's tenants object"); err != nil {
		return nil, err
	}
	snap := newSnapshot(cs.Tenants, s.root, s.cfg.Logger)
	snap.version, snap.generation, snap.writes = version, cs.Generation, cs.Writes
	return snap, nil
}

// Refresh brings the store up to date with the cluster: it asks for the object's version, and
// reads the object when that differs from the one the store holds. The store does this by
// itself (polling, and for lookups that find nothing); it is exported for tests and for an
// operator's "reload now". It does nothing for a store kept in a file.
func (s *Store) Refresh(ctx context.Context) error {
	if s.cluster == nil {
		return nil
	}
	version, err := s.cluster.cfg.Blob.Version(ctx)
	if err != nil {
		return fmt.Errorf("auth: check the cluster's tenants object: %w", err)
	}
	if version == s.current().version {
		return nil
	}
	return s.reload(ctx)
}

// reload reads the object and installs it unless it is older than what the store holds.
func (s *Store) reload(ctx context.Context) error {
	snap, err := s.loadCluster(ctx)
	if err != nil {
		return err
	}
	s.install(snap, false)
	return nil
}

// reloadAfterConflict reads the state another proxy wrote, for a change to be applied again.
// The pause, growing and random, keeps proxies that keep colliding from doing so in step.
func (s *Store) reloadAfterConflict(ctx context.Context, attempt int) error {
	if s.cluster == nil {
		return errors.New("auth: a conflict on a store no one else writes")
	}
	pause := time.Duration(rand.Int64N(int64(min(attempt, 10)) * int64(10*time.Millisecond)))
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(pause):
	}
	if err := s.reload(ctx); err != nil {
		return fmt.Errorf("auth: after a concurrent change: %w", err)
	}
	return nil
}

// refreshOnMiss is called by a lookup that found nothing: in a cluster, what it looked for may
// have just been made through another proxy. It refreshes at most once per MissRefreshGap (a
// stream of unknown keys costs the cluster one HEAD per gap, not one per request), and reports
// whether the lookup should look again: a lookup that waited for another's refresh looks at its
// result.
func (s *Store) refreshOnMiss(ctx context.Context) bool {
	c := s.cluster
	if c == nil {
		return false
	}
	c.missMu.Lock()
	defer c.missMu.Unlock()
	now := time.Now()
	if now.Sub(c.lastMiss) < c.cfg.MissRefreshGap {
		return true
	}
	c.lastMiss = now
	ctx, cancel := context.WithTimeout(ctx, clusterIOTimeout)
	defer cancel()
	if err := s.Refresh(ctx); err != nil {
		s.cfg.Logger.WarnContext(ctx, "auth: refreshing the tenants for an unknown key", "err", err)
	}
	return true
}

// poll refreshes the store every PollInterval until Close. A failure keeps the state held (a
// proxy that cannot reach the object, or cannot open it, keeps serving the tenants it knows)
// and is logged when it starts and when it ends, not every poll.
func (s *Store) poll() {
	c := s.cluster
	defer close(c.done)
	t := time.NewTicker(c.cfg.PollInterval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-c.quit:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), clusterIOTimeout)
		err := s.Refresh(ctx)
		cancel()
		switch {
		case err != nil && !failing:
			s.cfg.Logger.Error("auth: cannot refresh the tenants from the cluster; serving those known", "err", err)
		case err == nil && failing:
			s.cfg.Logger.Info("auth: refreshing the tenants from the cluster again")
		}
		failing = err != nil
	}
}

func (c *clusterSync) stop() {
	c.stopOnce.Do(func() { close(c.quit) })
	<-c.done
}
