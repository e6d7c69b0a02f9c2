// Package server assembles one Cairn process from its parts: the storage node over the data
// directory, the ring, the proxy, the credential store and the protocol front ends, served on one
// HTTP listener with /healthz and /metrics beside them. It owns startup, readiness and shutdown.
package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/cairn-store/cairn/internal/s3"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cairn-store/cairn/internal/auth"
	"github.com/cairn-store/cairn/internal/backend"
	"github.com/cairn-store/cairn/internal/daemon"
	"github.com/cairn-store/cairn/internal/expirer"
	"github.com/cairn-store/cairn/internal/lifecycled"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/nodelease"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/replicator"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/rmanager"
	"github.com/cairn-store/cairn/internal/sse"
	"github.com/cairn-store/cairn/internal/storage"
	"github.com/cairn-store/cairn/internal/swift"
	"github.com/cairn-store/cairn/internal/versions"
	"github.com/cairn-store/cairn/internal/workload"
)

// Config configures a server.
type Config struct {
	DataDir string // default ./cairn-data
	Listen  string // default 127.0.0.1:8787; port 0 picks a free port
	// RootAccessKey and RootSecretKey fix the root key for this run; without them a key is
	// generated on first start and kept in DataDir.
	RootAccessKey, RootSecretKey string
	Region                       string // default us-east-1
	// Domains enable virtual-hosted-style addressing: a request to BUCKET.DOMAIN addresses
	// BUCKET (path-style always works).
	Domains []string
	// SwiftDomains enable Swift's domain remapping: an unsigned request to
	// AUTH_account.DOMAIN or CONTAINER.AUTH_account.DOMAIN is a Swift request for that account
	// (and container). They must differ from Domains.
	SwiftDomains []string
	// DebugListen, when set, serves Go's profiler (net/http/pprof) on its own listener, meant
	// for loopback only.
	DebugListen string
	// InlineThreshold: objects up to this size live in the LSM (0: the engine's default).
	InlineThreshold int64
	// ExpirerInterval is the time between passes of the object expirer (0: its default;
	// negative: the expirer does not run).
	ExpirerInterval time.Duration
	// WorkloadWindow is how far back the workload monitor of the front ends looks (0: 5
	// minutes; negative: no monitor).
	WorkloadWindow time.Duration
	// MicrostoreManager configures the microstores' resource manager (internal/rmanager): its
	// thresholds and the capacities it counts with. MicrostoreManagerInterval is the time
	// between its passes (0: 30s; negative: it does not run, and only plans when asked).
	MicrostoreManager         rmanager.Config
	MicrostoreManagerInterval time.Duration
	// IndexDir, when set, puts the device's index (its LSM: object records and listings) in
	// this directory, typically on a faster device, instead of DataDir/devices/d0/lsm.
	IndexDir string
	// ReclaimAge is how long tombstones are kept before the sweeper removes them (0: a week,
	// Swift's reclaim_age); SweepInterval is the time between its passes (0: an hour;
	// negative: the sweeper does not run).
	ReclaimAge, SweepInterval time.Duration
	// AuditInterval is the auditor's rest between passes over the node's devices (0:
	// storage.DefaultAuditInterval; negative: the auditor does not run). AuditBytesPerSecond
	// and AuditRecordsPerSecond bound how fast a pass reads (0: storage's defaults; negative:
	// no bound).
	AuditInterval         time.Duration
	AuditBytesPerSecond   int64
	AuditRecordsPerSecond int
	// AbortUploadsAfter: the upload sweeper (which runs with the sweeper, removing what ended
	// multipart uploads left behind) also aborts uploads with no new part for longer (0: never,
	// as S3 without a lifecycle rule).
	AbortUploadsAfter time.Duration
	// LifecycleInterval is the time between passes of the S3 lifecycle daemon (0: 1h;
	// negative: it does not run); LifecycleObjectsPerSecond bounds the versions and uploads a
	// pass examines (0: 500). LifecycleDay is the length of a lifecycle rule's day (0: 24h):
	// only tests shorten it.
	LifecycleInterval         time.Duration
	LifecycleObjectsPerSecond int
	LifecycleDay              time.Duration
	// BodyIdleTimeout: a request body that sends no byte for this long fails (S3
	// RequestTimeout, Swift 408) and its upload is dropped, and a response the client takes
	// no byte of for this long is cut off (0: DefaultBodyIdleTimeout; negative: bodies and
	// responses may stall forever). Headers have their own 30 s timeout.
	BodyIdleTimeout time.Duration
	// MaxConcurrentRequests bounds the S3, Swift and admin requests served at once (0:
	// DefaultMaxConcurrentRequests; negative: no limit). One over it waits up to AdmissionWait
	// for a slot (0: DefaultAdmissionWait; negative: not at all), then gets 503 (S3 SlowDown).
	// /healthz and /metrics are never refused.
	MaxConcurrentRequests int
	AdmissionWait         time.Duration
	// LaneShare is how many large-object requests are served at once while small ones are
	// being served (lanes.go; 0 or negative: no lanes, the default); a request
	// is large when its body is at least LaneLargeSize (0: 1 MiB) or it reads a bucket of
	// large objects. One over the share waits up to LaneWait (0: 30s), then gets 503.
	LaneShare     int
	LaneLargeSize int64
	LaneWait      time.Duration
	// Role is what this process is: the embedded default (everything in one process over one
	// device, no ring) or one part of a cluster (cluster.go).
	Role Role
	// RingDir holds a cluster's ring files (account.ring.gz, container.ring.gz,
	// object.ring.gz), followed while running; ClusterSecret signs and checks every request
	// between the cluster's nodes. Both are required in a cluster, unused otherwise.
	RingDir, ClusterSecret string
	// RingReload is how often ring files are checked for changes (0: ring's default, 15s).
	RingReload time.Duration
	// Advertise is the address others name this node by, when it is not Listen (behind a NAT,
	// a port forward or a relay, or listening on 0.0.0.0): the rings name a storage node by it
	// (Swift's ring IP that is not its bind IP), a microstore names a proxy by it.
	Advertise string
	// Replication configures the replicator of a storage or sumo node, and its reconstructor
	// (erasure-coded policies): the pause between their passes (0: 30s; negative: they do not
	// run), the partitions each works on at once (0: 2) and the bytes per second each may send
	// (0: 100 MiB/s; negative: unbounded).
	ReplicationInterval       time.Duration
	ReplicationConcurrency    int
	ReplicationBytesPerSecond int64
	// ReadLeases makes a storage node keep read leases (internal/readlease, internal/
	// nodelease) with its peers (renewals, marks of its writes, revocations), and a proxy ask
	// the first primary to answer a read alone under its lease and revoke it before answering
	// what it may not know (proxy/lease.go). Every node of a cluster needs the same setting.
	// Off by default until measured (docs/consistency.md, "Read leases").
	ReadLeases bool
	// StartupWait is how long a proxy started before its storage nodes waits for them to
	// read the tenants (0: 2 minutes).
	StartupWait time.Duration
	// SSEMasterKeyFile is the master key of server-side encryption (package sse): a file of 32
	// random bytes as hex or base64, which must exist. Empty: the key at
	// sse.MasterKeyPathFor(DataDir), beside the data directory, made on first start. Every
	// proxy of a cluster needs the same key.
	SSEMasterKeyFile string
	// SSECAllowHTTP accepts SSE-C requests over plain HTTP (S3 refuses them: the customer's
	// key would cross the network in the clear).
	SSECAllowHTTP bool
	// sseKeys is the keyring the front ends share, once openFront made it.
	sseKeys *sse.Keyring
	// workload is the front ends' workload monitor (nil: none), once openFront made it.
	workload *workload.Monitor
	Logger   *slog.Logger
	// Console receives the lines meant for the operator's eyes (the endpoint, a generated key
	// shown once); never the log, so that secrets stay out of logs.
	Console io.Writer
}

// DefaultListen is where the embedded default serves.
const DefaultListen = "127.0.0.1:8787"

// Validate checks the configuration and fills in defaults.
func (c *Config) Validate() error {
	if c.DataDir == "" {
		c.DataDir = "cairn-data"
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if err := c.validateRole(); err != nil {
		return err
	}
	if c.StartupWait == 0 {
		c.StartupWait = 2 * time.Minute
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("server: listen address %q: %w", c.Listen, err)
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	if c.InlineThreshold < 0 {
		return errors.New("server: negative inline threshold")
	}
	for _, sd := range c.SwiftDomains {
		for _, d := range c.Domains {
			if strings.EqualFold(strings.Trim(sd, "."), strings.Trim(d, ".")) {
				return fmt.Errorf("server: %q is both an S3 domain and a Swift storage domain", d)
			}
		}
	}
	if c.BodyIdleTimeout == 0 {
		c.BodyIdleTimeout = DefaultBodyIdleTimeout
	}
	if c.MaxConcurrentRequests == 0 {
		c.MaxConcurrentRequests = DefaultMaxConcurrentRequests
	}
	if c.AdmissionWait == 0 {
		c.AdmissionWait = DefaultAdmissionWait
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Console == nil {
		c.Console = io.Discard
	}
	return nil
}

// Server is a running Cairn process.
type Server struct {
	cfg        Config
	proxy      *proxy.Proxy    // nil on a storage node
	node       *storage.Node   // nil on a proxy
	dialer     *backend.Dialer // nil in the embedded default
	rings      *clusterRings   // the ring files a cluster node follows (nil in the embedded default)
	listener   net.Listener
	http       *http.Server
	debug      *http.Server
	expirer    *expirer.Daemon        // nil when disabled
	sweeper    *storage.Sweeper       // nil when disabled
	replicator *replicator.Replicator // nil when disabled, or not a cluster's storage node
	// reconstructor keeps erasure-coded policies' archives home: nil when replication is
	// disabled, or when no erasure-coded policy is served.
	reconstructor *replicator.Reconstructor
	// leases is a storage node's read-lease state (leases.go), nil unless Config.ReadLeases.
	leases    *nodelease.Service
	auditor   *storage.Auditor   // nil when disabled
	uploads   *s3.UploadSweeper  // nil when disabled
	lifecycle *lifecycled.Daemon // nil when disabled
	manager   *rmanager.Manager  // the microstores' resource manager; nil on a storage node
	// startManager starts its passes under the cluster's lease; nil when they do not run.
	startManager func()
	// generated is the root key when this start generated it, shown once on the console.
	generated *auth.Key
	keys      *auth.Store
	serving   chan error // the HTTP server's end, when Start already began serving
}

// localNode is the ring's name for this process's own storage node in the embedded default.
const localNode = "local"

// Start opens the data directory and binds the listener; Serve then answers requests.
func Start(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg}
	ok := false
	defer func() {
		if !ok {
			s.closeParts()
		}
	}()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if cfg.Role != RoleEmbedded {
		if err := s.openCluster(); err != nil {
			return nil, err
		}
	}
	if cfg.Role != RoleProxy {
		if err := s.openNode(reg); err != nil {
			return nil, err
		}
	}
	var nodeAPI http.Handler
	if cfg.Role == RoleStorage || cfg.Role == RoleSumo {
		h, err := backend.NewHandler(backend.HandlerConfig{Node: s.node, Secret: []byte(cfg.ClusterSecret), Logger: cfg.Logger})
		if err != nil {
			return nil, fmt.Errorf("server: node protocol: %w", err)
		}
		nodeAPI = h
	}
	var front *frontHolder
	if cfg.Role != RoleStorage {
		front = &frontHolder{}
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("server: listen: %w", err)
	}
	s.listener = ln
	s.http = &http.Server{
		Handler:           routes(front, nodeAPI, promhttp.HandlerFor(reg, promhttp.HandlerOpts{})),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// S3 limits request headers to 8 KiB; allow more for odd clients, but bounded.
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
	}
	if cfg.Role == RoleSumo {
		// A sumo node serves its devices before its front ends are ready: they read the tenants
		// from the cluster, which may need this very node (and it the others).
		s.serving = make(chan error, 1)
		go func() { s.serving <- s.http.Serve(ln) }()
	}
	if front != nil {
		f, err := s.openFront(reg)
		if err != nil {
			ln.Close()
			return nil, err
		}
		front.p.Store(&f)
	}
	if cfg.DebugListen != "" {
		dl, err := net.Listen("tcp", cfg.DebugListen)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("server: debug listen: %w", err)
		}
		dmux := http.NewServeMux()
		dmux.HandleFunc("/debug/pprof/", pprof.Index)
		dmux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		dmux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		s.debug = &http.Server{Handler: dmux, ReadHeaderTimeout: 10 * time.Second}
		go s.debug.Serve(dl)
		cfg.Logger.Info("profiler serving", "addr", dl.Addr().String())
	}
	if s.generated != nil {
		fmt.Fprintf(cfg.Console, "cairn: generated the root key (shown once; kept in %s):\n  access key: %s\n  secret key: %s\n",
			cfg.DataDir, s.generated.AccessKey, s.generated.SecretKey)
	}
	ok = true
	return s, nil
}

// openNode opens the storage node: the embedded default's one device, or a cluster node's
// devices (cluster.go).
func (s *Server) openNode(reg *prometheus.Registry) error {
	cfg := s.cfg
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("server: data directory: %w", err)
	}
	ncfg := storage.Config{
		Devices:         []storage.DeviceConfig{{Name: "d0", Dir: filepath.Join(cfg.DataDir, "devices", "d0"), IndexDir: cfg.IndexDir}},
		InlineThreshold: cfg.InlineThreshold,
		Logger:          cfg.Logger,
		Address:         localNode,
	}
	if cfg.Role != RoleEmbedded {
		devs, err := s.clusterDevices()
		if err != nil {
			return err
		}
		ncfg.Devices, ncfg.Address, ncfg.Peers = devs, s.ringAddress(), s.dialer
		obj := s.rings.objects[0].Current()
		ncfg.HashPrefix, ncfg.HashSuffix = obj.HashPrefix, obj.HashSuffix
	}
	node, err := storage.Open(ncfg)
	if err != nil {
		return err
	}
	s.node = node
	reg.MustRegister(node.Collector())
	if cfg.SweepInterval >= 0 {
		if s.sweeper, err = node.NewSweeper(storage.SweeperConfig{ReclaimAge: cfg.ReclaimAge, Interval: cfg.SweepInterval, Logger: cfg.Logger, Registry: reg}); err != nil {
			return fmt.Errorf("server: %w", err)
		}
	}
	if cfg.AuditInterval >= 0 {
		if s.auditor, err = node.NewAuditor(storage.AuditorConfig{Interval: cfg.AuditInterval, BytesPerSecond: cfg.AuditBytesPerSecond,
			RecordsPerSecond: cfg.AuditRecordsPerSecond, Logger: cfg.Logger, Registry: reg}); err != nil {
			return fmt.Errorf("server: %w", err)
		}
		node.ReportStatus("auditor", s.auditor.DaemonStatus)
	}
	if err := s.openLeases(reg); err != nil {
		return fmt.Errorf("server: read leases: %w", err)
	}
	if cfg.Role != RoleEmbedded && cfg.ReplicationInterval >= 0 {
		if s.replicator, err = s.newReplicator(reg); err != nil {
			return fmt.Errorf("server: %w", err)
		}
		if s.reconstructor, err = s.newReconstructor(reg); err != nil {
			return fmt.Errorf("server: %w", err)
		}
	}
	return nil
}

// openFront opens what serves clients: the proxy over the storage nodes, the tenant store, the
// S3, Swift and admin front ends behind the admission guard, and the daemons that work through
// the proxy.
func (s *Server) openFront(reg *prometheus.Registry) (frontRoutes, error) {
	cfg := s.cfg
	pcfg := proxy.Config{Logger: cfg.Logger}
	if cfg.Role == RoleEmbedded {
		pcfg.Ring, pcfg.Dialer = ring.SingleDevice(localNode, "d0", 10, ""), nodeclient.Local{Client: s.node}
	} else {
		s.clusterProxyConfig(&pcfg)
	}
	px, err := proxy.New(pcfg)
	if err != nil {
		return frontRoutes{}, err
	}
	s.proxy = px
	keys, err := s.openTenants(px)
	if err != nil {
		return frontRoutes{}, err
	}
	if cfg.sseKeys, err = s.openKeyring(keys); err != nil {
		return frontRoutes{}, err
	}
	if cfg.WorkloadWindow >= 0 {
		if cfg.workload, err = workload.New(workload.Config{Window: cfg.WorkloadWindow}); err != nil {
			return frontRoutes{}, fmt.Errorf("server: %w", err)
		}
		if err := reg.Register(cfg.workload.Collector()); err != nil {
			return frontRoutes{}, fmt.Errorf("server: workload metrics: %w", err)
		}
	}
	s3h, err := newS3(cfg, px, keys, reg)
	if err != nil {
		return frontRoutes{}, err
	}
	// The microstores: their description, and the load redirector that passes a request for
	// another microstore's bucket to one of its proxies.
	ms := newMicrostores(px, keys)
	self := s.listener.Addr().String()
	if cfg.Advertise != "" {
		self = cfg.Advertise
	}
	rt := newRouter(px, keys, ms, self, cfg.Domains, cfg.workload, cfg.Logger)
	ms.changed = rt.changed
	px.SetPlacement(rt.place)
	if s.manager, err = ms.newManager(cfg.MicrostoreManager, keys, cfg.Region, cfg.Logger); err != nil {
		return frontRoutes{}, err
	}
	front, err := withAdmin(cfg, px, keys, s.clusterStatus, ms, s3h)
	if err != nil {
		return frontRoutes{}, err
	}
	// Swift's changes to a container's access state reach the S3 front end's cache at once.
	sw, err := newSwift(cfg, px, keys, reg, s3h.ForgetAccessState)
	if err != nil {
		return frontRoutes{}, err
	}
	g, err := newGuard(cfg, rt.wrap(rt.servedBy(api(front, sw))), func(w http.ResponseWriter, r *http.Request) {
		if swiftRequest(r) || (!signed(r) && sw.IsDomainRequest(r)) {
			sw.ServeOverloaded(w, r)
		} else {
			s3h.ServeSlowDown(w, r)
		}
	}, reg)
	if err != nil {
		return frontRoutes{}, err
	}
	// In a cluster, the daemons that work through the proxy run on one proxy at a time.
	lease := func(name string, interval time.Duration) daemon.Lease {
		if cfg.Role == RoleEmbedded {
			return nil
		}
		// Three passes' time: a holder that stops is replaced within that, and one whose
		// pass outlasts it overlaps another's for a while, which these daemons' conditional
		// writes make harmless.
		return clusterLease(px, name, leaseHolder(s.listener.Addr().String()), 3*interval, time.Now)
	}
	if cfg.MicrostoreManagerInterval >= 0 {
		interval := cmp.Or(cfg.MicrostoreManagerInterval, rmanager.DefaultInterval)
		s.startManager = func() { s.manager.Start(interval, lease("microstore-manager", interval)) }
	}
	if cfg.SweepInterval >= 0 {
		accounts := func(ctx context.Context) ([]string, error) {
			as, err := keys.Accounts(ctx)
			names := make([]string, len(as))
			for i, a := range as {
				names[i] = a.Name
			}
			return names, err
		}
		interval := cfg.SweepInterval
		if interval == 0 {
			interval = s3.DefaultUploadSweepInterval
		}
		if s.uploads, err = s3h.NewUploadSweeper(s3.UploadSweeperConfig{Accounts: accounts, Interval: cfg.SweepInterval, AbandonAfter: cfg.AbortUploadsAfter,
			Logger: cfg.Logger, Registry: reg, Lease: lease("upload-sweeper", interval)}); err != nil {
			return frontRoutes{}, fmt.Errorf("server: %w", err)
		}
	}
	if cfg.LifecycleInterval >= 0 {
		interval := cfg.LifecycleInterval
		if interval == 0 {
			interval = lifecycled.DefaultInterval
		}
		if s.lifecycle, err = lifecycled.New(lifecycled.Config{Proxy: px, Versions: versions.New(px), Uploads: s3h, Interval: interval, ObjectsPerSecond: cfg.LifecycleObjectsPerSecond, Day: cfg.LifecycleDay,
			Logger: cfg.Logger, Registry: reg, Lease: lease("lifecycle", interval)}); err != nil {
			return frontRoutes{}, fmt.Errorf("server: %w", err)
		}
		if s.node != nil {
			// A sumo node, or the embedded default: `cairn admin status` shows its progress
			// (on the proxy holding the cluster's lease; the others show no pass).
			s.node.ReportStatus("lifecycle", s.lifecycle.DaemonStatus)
		}
	}
	if cfg.ExpirerInterval >= 0 {
		interval := cfg.ExpirerInterval
		if interval == 0 {
			interval = expirer.DefaultInterval
		}
		if s.expirer, err = expirer.New(expirer.Config{Proxy: px, Interval: cfg.ExpirerInterval, Logger: cfg.Logger, Registry: reg,
			Lease: lease("expirer", interval)}); err != nil {
			return frontRoutes{}, fmt.Errorf("server: %w", err)
		}
	}
	return frontRoutes{guarded: g, swift: sw}, nil
}

// openTenants opens the tenant store: a file in the data directory in the embedded default, an
// object in the cluster (shared by every proxy, internal/auth's OpenCluster) otherwise. A proxy
// that starts before its storage nodes waits for them, up to StartupWait.
func (s *Server) openTenants(px *proxy.Proxy) (*auth.Store, error) {
	cfg := s.cfg
	if cfg.Role == RoleEmbedded {
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("server: data directory: %w", err)
		}
		keys, generated, err := auth.Open(auth.Config{Dir: cfg.DataDir, RootAccessKey: cfg.RootAccessKey, RootSecretKey: cfg.RootSecretKey, Logger: cfg.Logger})
		s.generated, s.keys = generated, keys
		return keys, err
	}
	deadline := time.Now().Add(cfg.StartupWait)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		keys, err := auth.OpenCluster(ctx,
			auth.Config{RootAccessKey: cfg.RootAccessKey, RootSecretKey: cfg.RootSecretKey, Logger: cfg.Logger},
			auth.ClusterConfig{Blob: NewTenantsBlob(px), Secret: []byte(cfg.ClusterSecret)})
		cancel()
		if err == nil {
			s.keys = keys
			return keys, nil
		}
		// A wrong secret or a damaged object will not mend by waiting.
		if errors.Is(err, auth.ErrWrongClusterSecret) || errors.Is(err, auth.ErrTenantsCorrupt) || time.Now().After(deadline) {
			return nil, fmt.Errorf("server: tenants: %w", err)
		}
		cfg.Logger.Warn("tenants not readable from the cluster yet; retrying", "err", err)
		time.Sleep(time.Second)
	}
}

// closeParts closes what a failed Start opened.
func (s *Server) closeParts() {
	if s.keys != nil {
		s.keys.Close()
	}
	if s.proxy != nil {
		s.proxy.Close()
	}
	if s.node != nil {
		s.node.Close()
	}
	if s.dialer != nil {
		s.dialer.Close()
	}
}

// Endpoint is the URL the server answers on.
func (s *Server) Endpoint() string { return "http://" + s.listener.Addr().String() }

// Serve answers requests until ctx ends, then shuts down gracefully and closes the storage.
func (s *Server) Serve(ctx context.Context) error {
	errc := s.serving
	if errc == nil {
		errc = make(chan error, 1)
		go func() { errc <- s.http.Serve(s.listener) }()
	}
	if s.sweeper != nil {
		s.sweeper.Start()
	}
	if s.replicator != nil {
		s.replicator.Start()
	}
	if s.reconstructor != nil {
		s.reconstructor.Start()
	}
	if s.auditor != nil {
		s.auditor.Start()
	}
	if s.uploads != nil {
		s.uploads.Start()
	}
	if s.expirer != nil {
		s.expirer.Start()
	}
	if s.lifecycle != nil {
		s.lifecycle.Start()
	}
	if s.startManager != nil {
		s.startManager()
	}
	watchCtx, stopWatching := context.WithCancel(context.Background())
	defer stopWatching()
	for _, w := range s.rings.all() {
		go w.Run(watchCtx)
	}
	if s.node != nil && s.cfg.Role != RoleEmbedded {
		go s.followDevices(watchCtx)
		if s.leases != nil {
			go s.leases.Run(watchCtx)
		}
	}
	if s.cfg.Role == RoleStorage {
		fmt.Fprintf(s.cfg.Console, "cairn: storage node %s\n", s.Endpoint())
	} else {
		fmt.Fprintf(s.cfg.Console, "cairn: S3 endpoint %s\n", s.Endpoint())
	}
	s.cfg.Logger.Info("serving", "role", s.cfg.Role.String(), "endpoint", s.Endpoint(), "data", s.cfg.DataDir)
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = s.http.Shutdown(shutdownCtx)
		cancel()
	}
	if s.debug != nil {
		s.debug.Close()
	}
	if s.sweeper != nil {
		s.sweeper.Stop()
	}
	if s.replicator != nil {
		s.replicator.Stop()
	}
	if s.reconstructor != nil {
		s.reconstructor.Stop()
	}
	if s.auditor != nil {
		s.auditor.Stop()
	}
	if s.uploads != nil {
		s.uploads.Stop()
	}
	if s.expirer != nil {
		s.expirer.Stop()
	}
	if s.lifecycle != nil {
		s.lifecycle.Stop()
	}
	if s.manager != nil {
		s.manager.Stop()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if s.keys != nil {
		s.keys.Close()
	}
	if s.proxy != nil {
		s.proxy.Close()
	}
	if s.node != nil {
		err = errors.Join(err, s.node.Close())
	}
	if s.dialer != nil {
		s.dialer.Close()
	}
	return err
}

// routes sends unsigned GET /healthz and /metrics to the server's own handlers, never refused
// nor counted in flight, requests signed with the cluster's node signature to the node protocol
// (nodeAPI, on storage and sumo nodes), and everything else to the client front ends (front,
// which is nil on a storage node). (http.ServeMux would redirect paths holding "//" or "/../",
// which are legal in object keys, and would take buckets named "healthz" from S3.)
func routes(front *frontHolder, nodeAPI, metrics http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := front.get()
		if r.Method == http.MethodGet && (r.URL.Path == "/healthz" || r.URL.Path == "/metrics") &&
			!signed(r) && !backend.Signed(r) && (f == nil || !f.swift.IsDomainRequest(r)) {
			switch {
			case r.URL.Path == "/metrics":
				metrics.ServeHTTP(w, r)
			case front != nil && f == nil:
				http.Error(w, "starting", http.StatusServiceUnavailable)
			default:
				io.WriteString(w, "ok\n")
			}
			return
		}
		if nodeAPI != nil && (front == nil || backend.Signed(r)) {
			nodeAPI.ServeHTTP(w, r)
			return
		}
		if f == nil {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		f.ServeHTTP(w, r)
	})
}

// frontHolder holds the client front ends once they are ready (nil holder: a storage node,
// which has none).
type frontHolder struct{ p atomic.Pointer[frontRoutes] }

func (h *frontHolder) get() *frontRoutes {
	if h == nil {
		return nil
	}
	return h.p.Load()
}

// frontRoutes is the client front ends behind the guard.
type frontRoutes struct {
	guarded http.Handler
	swift   *swift.Handler
}

func (f frontRoutes) ServeHTTP(w http.ResponseWriter, r *http.Request) { f.guarded.ServeHTTP(w, r) }

// api sends Swift requests (see swiftRequest), and unsigned ones to a Swift storage domain, to
// the Swift front end and everything else to front (admin and S3) untouched.
func api(front http.Handler, sw *swift.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !signed(r) && sw.ServeDomain(w, r) {
			return
		}
		if swiftRequest(r) {
			sw.ServeHTTP(w, r)
			return
		}
		front.ServeHTTP(w, r)
	})
}

// signed reports whether a request carries credentials of any protocol (header or presigned).
func signed(r *http.Request) bool {
	if r.Header.Get("Authorization") != "" {
		return true
	}
	q := r.URL.Query()
	return q.Has("X-Amz-Signature") || q.Has("Signature")
}

// Defaults of the S3 lifecycle daemon, for the command line.
const (
	DefaultLifecycleInterval         = lifecycled.DefaultInterval
	DefaultLifecycleObjectsPerSecond = lifecycled.DefaultObjectsPerSecond
	DefaultLifecycleDay              = 24 * time.Hour
)

// openKeyring opens the master key of server-side encryption (SSEMasterKeyFile, or the one
// beside the data directory, made on first start) and makes the keyring, with the tenant
// store as its KMS key store. It logs where the key is, never the key.
func (s *Server) openKeyring(keys *auth.Store) (*sse.Keyring, error) {
	cfg := s.cfg
	var master []byte
	var err error
	if path := cfg.SSEMasterKeyFile; path != "" {
		if master, err = sse.ReadMasterKey(path); err != nil {
			return nil, fmt.Errorf("server: --sse-master-key-file %s: %w", path, err)
		}
		cfg.Logger.Info("sse: master key read", "path", path)
	} else {
		path := sse.MasterKeyPathFor(cfg.DataDir)
		var created bool
		if master, created, err = sse.EnsureMasterKey(path); err != nil {
			return nil, fmt.Errorf("server: %s: %w", path, err)
		}
		if created {
			cfg.Logger.Warn("sse: generated a new master key for server-side encryption; back it up apart from the data: encrypted objects cannot be read without it", "path", path)
		} else {
			cfg.Logger.Info("sse: master key read", "path", path)
		}
		if cfg.Role != RoleEmbedded {
			cfg.Logger.Warn("sse: a cluster's proxies need one master key: give each the same --sse-master-key-file", "path", path)
		}
	}
	kr, err := sse.NewKeyring(master, keys)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	return kr, nil
}
