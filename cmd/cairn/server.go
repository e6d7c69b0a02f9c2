package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cairn-store/cairn/internal/expirer"
	"github.com/cairn-store/cairn/internal/server"
	"github.com/cairn-store/cairn/internal/storage"
)

func newServerCommand() *cobra.Command {
	var cfg server.Config
	var logLevel, role string
	var proxyNICMbps, storageNICMbps float64
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the object store (with no flags: one process, data in ./cairn-data, S3 on " + server.DefaultListen + ")",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			var level slog.Level
			var err error
			if err = level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level: %w", err)
			}
			if cfg.Role, err = server.ParseRole(role); err != nil {
				return err
			}
			// Mbit/s on the command line, as NICs are sold; bytes a second in the manager.
			cfg.MicrostoreManager.ProxyNIC, cfg.MicrostoreManager.StorageNIC = proxyNICMbps*1e6/8, storageNICMbps*1e6/8
			cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
			cfg.Console = os.Stdout
			s, err := server.Start(cfg)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return s.Serve(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DataDir, "data", "cairn-data", "data directory (a storage or sumo node: its devices are the directories under DATA/devices/, made on first start for each device the rings name for --listen)")
	f.StringVar(&cfg.Listen, "listen", server.DefaultListen, "address to serve on (host:port; port 0 picks one); a storage or sumo node is the node the rings name by this address")
	f.StringVar(&cfg.RootAccessKey, "root-access-key", "", "root access key (default: generated on first start and kept in the data directory)")
	f.StringVar(&cfg.RootSecretKey, "root-secret-key", "", "root secret key (with --root-access-key)")
	f.StringVar(&cfg.Region, "region", "us-east-1", "S3 region name")
	f.StringSliceVar(&cfg.Domains, "domain", nil, "serve virtual-hosted-style requests for BUCKET.DOMAIN (repeatable; path-style always works)")
	f.StringSliceVar(&cfg.SwiftDomains, "swift-domain", nil, "serve Swift requests for AUTH_account.DOMAIN and CONTAINER.AUTH_account.DOMAIN (Swift's domain_remap; repeatable)")
	f.Int64Var(&cfg.InlineThreshold, "inline-threshold", 0, "objects up to this many bytes are stored inline in the LSM (0: default)")
	f.StringVar(&cfg.DebugListen, "debug-listen", "", "serve Go's profiler (/debug/pprof) on this address (loopback only)")
	f.DurationVar(&cfg.ExpirerInterval, "expirer-interval", expirer.DefaultInterval, "time between passes of the object expirer, which removes objects whose X-Delete-At has passed (negative: off)")
	f.DurationVar(&cfg.WorkloadWindow, "workload-window", 0, "how far back the workload monitor looks: each bucket's op mix, rates, object sizes, latencies and class (cairn admin workload, /metrics by class; 0: 5m, negative: off)")
	f.DurationVar(&cfg.MicrostoreManagerInterval, "microstore-manager-interval", 0, "time between passes of the microstores' resource manager, which moves proxies between the free pool and the microstores (one proxy of a cluster at a time; 0: 30s, negative: off)")
	f.Float64Var(&cfg.MicrostoreManager.High, "microstore-manager-high", 0.75, "the resource manager doubles the proxies of a microstore whose utilization (CPU or network, by the advisor's demands) is above this")
	f.Float64Var(&cfg.MicrostoreManager.Low, "microstore-manager-low", 0.30, "the resource manager takes one proxy a pass from a microstore whose utilization is below this")
	f.Float64Var(&proxyNICMbps, "microstore-manager-proxy-nic-mbps", 10000, "a proxy's network bandwidth in Mbit/s, which the resource manager counts a microstore's network utilization against")
	f.Float64Var(&storageNICMbps, "microstore-manager-storage-nic-mbps", 10000, "a storage node's network bandwidth in Mbit/s, for the resource manager's rule of thumb (proxy bandwidth ≈ storage nodes × this)")
	f.Float64Var(&cfg.MicrostoreManager.StorageCores, "microstore-manager-storage-cores", 8, "a storage node's cores, for the resource manager's rule of thumb (proxy cores ≈ storage nodes × this)")
	f.DurationVar(&cfg.BodyIdleTimeout, "body-idle-timeout", server.DefaultBodyIdleTimeout, "a request body that sends no byte for this long fails (S3 RequestTimeout, Swift 408) and its upload is dropped; a response the client reads no byte of for this long is cut off (negative: off)")
	f.IntVar(&cfg.LaneShare, "lane-share", 0, "large-object requests (a body of --lane-large-size or more, or a read of a bucket of large objects) served at once while small ones are being served, so that a backup stream cannot starve small requests (0: no lanes)")
	f.Int64Var(&cfg.LaneLargeSize, "lane-large-size", server.DefaultLaneLargeSize, "a request body at least this large goes in the large-object lane")
	f.DurationVar(&cfg.LaneWait, "lane-wait", server.DefaultLaneWait, "how long a large-object request waits for its lane's turn before it gets 503 SlowDown")
	f.IntVar(&cfg.MaxConcurrentRequests, "max-requests", server.DefaultMaxConcurrentRequests, "S3, Swift and admin requests served at once; more wait --admission-wait, then get 503 SlowDown (negative: no limit)")
	f.DurationVar(&cfg.AdmissionWait, "admission-wait", server.DefaultAdmissionWait, "how long a request over --max-requests waits for a slot before 503 SlowDown (negative: not at all)")
	f.StringVar(&cfg.IndexDir, "index-dir", "", "keep the device's index (LSM of object records and listings) in this directory, e.g. on a faster device (default: DATA/devices/d0/lsm); it and the data directory must belong together, or the device is refused")
	f.DurationVar(&cfg.ReclaimAge, "reclaim-age", 0, "how long tombstones of deleted objects are kept before the sweeper removes them (0: 168h, Swift's reclaim_age)")
	f.DurationVar(&cfg.SweepInterval, "sweep-interval", 0, "time between passes of the sweepers (tombstones; leftovers of ended multipart uploads) (0: 1h; negative: off)")
	f.DurationVar(&cfg.AuditInterval, "audit-interval", storage.DefaultAuditInterval, "rest between passes of the auditor, which re-reads every object and listing row of the node's devices against their checksums (negative: off)")
	f.Int64Var(&cfg.AuditBytesPerSecond, "audit-bytes-per-second", storage.DefaultAuditBytesPerSecond, "the auditor reads at most this many bytes a second, one device at a time (negative: no limit)")
	f.IntVar(&cfg.AuditRecordsPerSecond, "audit-records-per-second", storage.DefaultAuditRecordsPerSecond, "the auditor reads at most this many object records and listing rows a second (negative: no limit)")
	f.DurationVar(&cfg.AbortUploadsAfter, "abort-uploads-after", 0, "the upload sweeper aborts multipart uploads with no new part for longer (0: never, as S3 without a lifecycle rule)")
	f.DurationVar(&cfg.LifecycleInterval, "lifecycle-interval", server.DefaultLifecycleInterval, "time between passes of the S3 lifecycle daemon, which applies buckets' lifecycle rules (negative: off)")
	f.IntVar(&cfg.LifecycleObjectsPerSecond, "lifecycle-objects-per-second", server.DefaultLifecycleObjectsPerSecond, "the lifecycle daemon examines at most this many object versions and uploads a second")
	f.DurationVar(&cfg.LifecycleDay, "lifecycle-day", server.DefaultLifecycleDay, "for testing only: the length of a lifecycle rule's day")
	f.MarkHidden("lifecycle-day")
	f.StringVar(&cfg.SSEMasterKeyFile, "sse-master-key-file", "", "the master key of server-side encryption: a file of 32 random bytes as hex or base64 (default: DATA.master-key beside the data directory, generated on first start; every proxy of a cluster needs the same one; back it up apart from the data)")
	f.BoolVar(&cfg.SSECAllowHTTP, "sse-c-allow-http", false, "accept SSE-C (customer-provided keys) over plain HTTP, which S3 refuses; for a TLS proxy in front of Cairn, or tests")
	f.StringVar(&role, "role", "", "what this process is in a cluster: proxy (serves S3 and Swift, talks to storage nodes), storage (serves its devices to proxies) or sumo (both, on one port); without it, the embedded default: everything in one process")
	f.StringVar(&cfg.RingDir, "ring", "", "cluster roles: the directory of the ring files (account.ring.gz, container.ring.gz, object.ring.gz; `cairn ring write`), reloaded when they change")
	f.StringVar(&cfg.ClusterSecret, "cluster-secret", "", "cluster roles: the secret every node signs and checks node requests with, the same on every node (at least 16 characters; better from the environment, CAIRN_CLUSTER_SECRET)")
	f.DurationVar(&cfg.RingReload, "ring-reload", 0, "cluster roles: how often the ring files are checked for changes (0: 15s)")
	f.StringVar(&cfg.Advertise, "advertise", "", "the address others name this node by, when it differs from --listen (behind a NAT or port forward, or listening on 0.0.0.0): the rings name a storage or sumo node by it, a microstore a proxy")
	f.DurationVar(&cfg.ReplicationInterval, "replication-interval", 0, "storage and sumo nodes: pause between the passes of the replicator and of the reconstructor (erasure-coded policies) (0: 30s; negative: off)")
	f.BoolVar(&cfg.ReadLeases, "read-leases", false, "read leases (docs/consistency.md): storage nodes keep them with their peers, proxies let a first primary answer a GET alone under one; every node of a cluster needs the same setting")
	f.IntVar(&cfg.ReplicationConcurrency, "replication-concurrency", 0, "storage and sumo nodes: partitions the replicator, and the reconstructor, work on at once (0: 2)")
	f.Int64Var(&cfg.ReplicationBytesPerSecond, "replication-bytes-per-second", 0, "storage and sumo nodes: bytes per second the replicator may send to other nodes, and the reconstructor read and send (0: 100 MiB/s each; negative: unbounded)")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	return cmd
}
