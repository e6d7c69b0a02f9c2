package mosproof

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/advisor/netlab"
	"github.com/cairn-store/cairn/internal/localcluster"
	"github.com/cairn-store/cairn/internal/microstore"
	"github.com/cairn-store/cairn/internal/objclient"
	wl "github.com/cairn-store/cairn/internal/workload"
)

// rig is one layout's emulated cluster, ready for the tenants: its nodes, the microstores of
// the layout, both tenants' accounts and buckets, and HAProxy in front (a sumo layout has no
// HAProxy: its clients reach the one node).
type rig struct {
	layout string
	dir    string
	lab    *netlab.Lab
	cl     *localcluster.Cluster
	hp     *haproxy
	adm    *admin.Client
	// The tenants' clients' settings: endpoint, keys and their buckets' location.
	web, backup   objclient.Config
	stopFollowing func() // a dynamic layout's HAProxy following the manager's moves
}

// isSumo: the layout is one sumo node (every role in one process).
func isSumo(layout string) bool { return layout == Sumo || layout == SumoLanes }

// nodeArgs are the flags every node of the layout runs with.
func nodeArgs(cfg Config, layout string) []string {
	interval := "-1s" // off: only the dynamic layout has a resource manager
	if layout == Dynamic {
		interval = cfg.ManagerInterval.String()
	}
	args := []string{"--log-level", "warn", "--workload-window", cfg.WorkloadWindow.String(),
		"--microstore-manager-interval", interval,
		// What the emulated machines are, so that the manager counts utilization against them.
		"--microstore-manager-proxy-nic-mbps", fmt.Sprint(cfg.Proxy.NICMbps),
		"--microstore-manager-storage-nic-mbps", fmt.Sprint(cfg.StorageNode.NICMbps),
		"--microstore-manager-storage-cores", fmt.Sprint(cfg.StorageNode.CPU)}
	if cfg.ManagerHigh > 0 {
		args = append(args, "--microstore-manager-high", fmt.Sprint(cfg.ManagerHigh))
	}
	if cfg.ManagerLow > 0 {
		args = append(args, "--microstore-manager-low", fmt.Sprint(cfg.ManagerLow))
	}
	if layout == SumoLanes {
		args = append(args, "--lane-share", strconv.Itoa(cfg.LaneShare))
	}
	return args
}

// setUp builds the layout's cluster. The rig is returned even with an error, for close.
func setUp(ctx context.Context, cfg Config, layout string) (r *rig, err error) {
	r = &rig{layout: layout, dir: filepath.Join(cfg.Dir, layout)}
	if r.lab, err = netlab.Open(ctx, cfg.Logger); err != nil {
		return r, err
	}
	lc := localcluster.Config{Binary: cfg.Binary, Dir: r.dir, Replicas: cfg.Replicas, Policies: []string{"gold"},
		Args: nodeArgs(cfg, layout), Logger: cfg.Logger, NodeHost: r.lab.NodeHost, Wrap: r.lab.Wrap,
		RootAccessKey: randomHex(10), RootSecretKey: randomHex(20)}
	if isSumo(layout) {
		lc.Sumo, lc.Replicas = 1, 1
		if _, err := r.lab.Add(ctx, "sumo", 1, cfg.Sumo); err != nil {
			return r, err
		}
	} else {
		lc.Storage, lc.Proxies = 2*cfg.Storage, cfg.Proxies
		for i := 1; i <= lc.Storage; i++ {
			if _, err := r.lab.Add(ctx, "storage", i, cfg.StorageNode); err != nil {
				return r, err
			}
		}
		for i := 1; i <= cfg.Proxies; i++ {
			if _, err := r.lab.Add(ctx, "proxy", i, cfg.Proxy); err != nil {
				return r, err
			}
		}
		if layout != Monolithic {
			lc.Policies = []string{fmt.Sprintf("gold@1-%d", cfg.Storage), fmt.Sprintf("silver@%d-%d", cfg.Storage+1, lc.Storage)}
		}
	}
	if r.cl, err = localcluster.Start(ctx, lc); err != nil {
		return r, fmt.Errorf("starting the cluster: %w", err)
	}
	front := r.cl.Front()[0].Endpoint()
	if r.adm, err = admin.NewClient(admin.ClientConfig{Endpoint: front, AccessKey: lc.RootAccessKey, SecretKey: lc.RootSecretKey}); err != nil {
		return r, err
	}
	var proxies []string
	for _, n := range r.cl.Front() {
		proxies = append(proxies, n.Addr)
	}
	if err := r.microstores(ctx, cfg, proxies); err != nil {
		return r, err
	}
	if r.web, err = tenant(ctx, r.adm, "web"); err != nil {
		return r, err
	}
	if r.backup, err = tenant(ctx, r.adm, "backup"); err != nil {
		return r, err
	}
	r.web.BucketLocation, r.backup.BucketLocation = "us-east-1:gold", "us-east-1:gold"
	if layout == Static || layout == Dynamic {
		r.backup.BucketLocation = "us-east-1:silver"
	}
	r.web.Concurrency, r.backup.Concurrency = cfg.Web.Concurrency, cfg.Backup.Concurrency
	// The buckets first, in their policies, so that HAProxy's map has them.
	for _, t := range []struct {
		c    objclient.Config
		name string
	}{{r.web, bucketOf(cfg.Web)}, {r.backup, bucketOf(cfg.Backup)}} {
		t.c.Endpoint = front
		c, err := objclient.New(t.c)
		if err != nil {
			return r, err
		}
		err = c.CreateBucket(ctx, t.name)
		c.Close()
		if err != nil {
			return r, err
		}
	}
	endpoint := front
	if !isSumo(layout) {
		if r.hp, err = startHAProxy(ctx, cfg, r.dir, r.adm, proxies); err != nil {
			return r, err
		}
		endpoint = "http://" + r.hp.endpoint
	}
	r.web.Endpoint, r.backup.Endpoint = endpoint, endpoint
	if layout == Dynamic {
		// The manager's equal shares first, then HAProxy follows every change.
		if err := waitFor(ctx, 2*time.Minute, func() bool { return allocated(ctx, r.adm) }); err != nil {
			return r, fmt.Errorf("the resource manager gave out no equal shares: %w", err)
		}
		fctx, stop := context.WithCancel(ctx)
		followed := make(chan struct{})
		go func() { defer close(followed); r.hp.follow(fctx, r.adm, proxies) }()
		r.stopFollowing = func() { stop(); <-followed }
	}
	return r, nil
}

// microstores declares the layout's microstores: half the storage nodes and proxies each
// (static), or the same without proxies and every proxy in the resource manager's pool
// (dynamic).
func (r *rig) microstores(ctx context.Context, cfg Config, proxies []string) error {
	half := cfg.Proxies / 2
	small := microstore.Microstore{Name: "small", Policy: "gold", Classes: []wl.Class{wl.SmallReads, wl.SmallWrites}}
	large := microstore.Microstore{Name: "large", Policy: "silver", Classes: []wl.Class{wl.LargeReads, wl.LargeWrites}}
	switch r.layout {
	case Static:
		small.Proxies, large.Proxies = proxies[:half], proxies[half:]
	case Dynamic:
	default:
		return nil
	}
	for _, m := range []microstore.Microstore{small, large} {
		if _, err := r.adm.CreateMicrostore(ctx, m); err != nil {
			return err
		}
	}
	if r.layout == Dynamic {
		if _, err := r.adm.SetMicrostorePool(ctx, proxies); err != nil {
			return err
		}
	}
	return nil
}

// clients are the two tenants' clients, through the layout's endpoint.
func (r *rig) clients() (web, backup objclient.Client, err error) {
	if web, err = objclient.New(r.web); err != nil {
		return nil, nil, err
	}
	if backup, err = objclient.New(r.backup); err != nil {
		web.Close()
		return nil, nil, err
	}
	return web, backup, nil
}

// close stops HAProxy, the nodes and the lab, and removes the data.
func (r *rig) close(ctx context.Context) error {
	if r.stopFollowing != nil {
		r.stopFollowing() // before HAProxy stops
	}
	if r.hp != nil {
		r.hp.stop()
	}
	if r.cl != nil {
		r.cl.Close()
	}
	var err error
	if r.lab != nil {
		err = r.lab.Close(ctx)
	}
	return errors.Join(err, os.RemoveAll(r.dir))
}

// allocation is each microstore's proxies now, and the pool's; nil without microstores.
func (r *rig) allocation(ctx context.Context) (map[string]int, error) {
	d, err := r.adm.Microstores(ctx)
	if err != nil || len(d.Microstores) == 0 {
		return nil, err
	}
	out := map[string]int{"pool": len(d.Pool)}
	for _, m := range d.Microstores {
		out[m.Name] = len(m.Proxies)
	}
	return out, nil
}
