package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/auth"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/microstore"
	"github.com/cairn-store/cairn/internal/policy"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/rmanager"
)

// Where the cluster keeps its microstores' description (internal/microstore): one object beside
// the tenants object, in the reserved account.
const (
	MicrostoresContainer = "microstores"
	MicrostoresObject    = "description"
	maxDescription       = 1 << 20
)

// maxDescriptionAttempts bounds how often a change is applied again after another proxy
// changed the description under it (each conflict another's success: as the tenant store's,
// enough to outlast another proxy's run of changes).
const maxDescriptionAttempts = 64

// microstores keeps the description through the proxy and checks each change against the
// cluster's storage policies as well as against the description's own rules.
type microstores struct {
	obj      *clusterObject
	px       *proxy.Proxy
	accounts func(context.Context) ([]auth.Account, error)
	policies *policy.Set
	now      func() time.Time
	// changed, when set, is told of every change made through this proxy.
	changed func(*microstore.Description)
	// manager is the resource manager, whose plan GET /admin/v1/microstore-plan shows.
	manager *rmanager.Manager
}

func newMicrostores(px *proxy.Proxy, keys *auth.Store) *microstores {
	return &microstores{
		obj: &clusterObject{px: px, name: meta.ObjectName{Account: TenantsAccount, Container: MicrostoresContainer, Object: MicrostoresObject},
			what: "microstore description", max: maxDescription},
		px:       px,
		accounts: keys.Accounts,
		policies: px.Policies(),
		now:      time.Now,
	}
}

// Describe returns the cluster's description (an empty one, generation 0, before the first
// microstore is made).
func (m *microstores) Describe(ctx context.Context) (*microstore.Description, error) {
	d, _, err := m.load(ctx)
	return d, err
}

func (m *microstores) load(ctx context.Context) (*microstore.Description, string, error) {
	data, version, err := m.obj.Load(ctx)
	if errors.Is(err, auth.ErrBlobNotFound) {
		return &microstore.Description{Microstores: []microstore.Microstore{}}, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	d, err := microstore.Decode(data)
	if err != nil {
		return nil, "", err
	}
	return d, version, nil
}

// Change applies change to the description as the cluster has it and stores the result, as a
// compare-and-swap: when another proxy changed it meanwhile, the change is applied again to
// what it made. A change whose write's outcome is unknown is reported so (meta.ErrUnavailable).
func (m *microstores) Change(ctx context.Context, change microstore.Change) (*microstore.Description, error) {
	checked := func(d *microstore.Description) error {
		if err := change(d); err != nil {
			return err
		}
		for i, ms := range d.Microstores {
			p, ok := m.policies.ByName(ms.Policy)
			if !ok {
				return fmt.Errorf("microstore %q: no storage policy %q: %w", ms.Name, ms.Policy, microstore.ErrInvalid)
			}
			d.Microstores[i].Policy = p.Name // an alias names the policy too; the description keeps its name
		}
		return nil
	}
	for attempt := 1; ; attempt++ {
		d, version, err := m.load(ctx)
		if err != nil {
			return nil, err
		}
		next, err := d.Apply(checked, m.now())
		if err != nil {
			return nil, err
		}
		data, err := next.Encode()
		if err != nil {
			return nil, err
		}
		_, err = m.obj.Store(ctx, data, version)
		if errors.Is(err, auth.ErrBlobConflict) && attempt < maxDescriptionAttempts {
			pause := time.Duration(rand.Int64N(int64(min(attempt, 10)) * int64(10*time.Millisecond)))
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(pause):
			}
			continue
		}
		if errors.Is(err, auth.ErrBlobUnknown) {
			return nil, fmt.Errorf("%v: %w", err, meta.ErrUnavailable)
		}
		if err != nil {
			return nil, err
		}
		if m.changed != nil {
			m.changed(next)
		}
		return next, nil
	}
}

// maxBuckets bounds the buckets Buckets lists: past it the list is cut (a load balancer's map
// that leaves buckets out only costs them a hop).
const maxBuckets = 1_000_000

// Buckets returns the cluster's buckets (every account's containers, reserved ones aside), each
// with the microstore of its policy ("" for none), for a load balancer's map; truncated when
// there were more than maxBuckets. It reads every account's listing and each container's
// policy: a tool's request, not a request path's.
func (m *microstores) Buckets(ctx context.Context) (buckets []microstore.Bucket, truncated bool, err error) {
	d, err := m.Describe(ctx)
	if err != nil {
		return nil, false, err
	}
	accounts, err := m.accounts(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("microstores: buckets: %w", err)
	}
	for _, a := range accounts {
		opts := meta.ListOptions{}
		for {
			l, err := m.px.ListContainers(ctx, a.Name, opts)
			if err != nil {
				return nil, false, fmt.Errorf("microstores: buckets of %q: %w", a.Name, err)
			}
			for _, c := range l.Containers {
				if len(buckets) == maxBuckets {
					return buckets, true, nil
				}
				p, err := m.px.ContainerPolicy(ctx, a.Name, c.Name)
				if errors.Is(err, meta.ErrNoContainer) {
					continue // deleted since the listing
				}
				if err != nil {
					return nil, false, fmt.Errorf("microstores: policy of %s/%s: %w", a.Name, c.Name, err)
				}
				ms, _ := d.OfPolicy(p.Names()...)
				buckets = append(buckets, microstore.Bucket{Account: a.Name, Bucket: c.Name, Microstore: ms.Name})
			}
			if !l.Truncated || len(l.Containers) == 0 {
				break
			}
			opts.Marker = l.Containers[len(l.Containers)-1].Name
		}
	}
	return buckets, false, nil
}

// Plan is what the resource manager would do now (GET /admin/v1/microstore-plan).
func (m *microstores) Plan(ctx context.Context) (rmanager.Plan, error) {
	p, _, err := m.manager.Plan(ctx)
	return p, err
}

// newManager makes the resource manager of the microstores: it reads each proxy's workload
// monitor through the admin API, signed with the root key (the proxies of a cluster share it,
// as `cairn admin` against any of them needs), and each microstore's policy from this proxy's
// rings.
func (m *microstores) newManager(cfg rmanager.Config, keys *auth.Store, region string, log *slog.Logger) (*rmanager.Manager, error) {
	root := keys.Root()
	client := &http.Client{Timeout: time.Minute}
	report := func(ctx context.Context, proxy string) (rmanager.Report, error) {
		c, err := admin.NewClient(admin.ClientConfig{Endpoint: "http://" + proxy, AccessKey: root.AccessKey, SecretKey: root.SecretKey, Region: region, HTTPClient: client})
		if err != nil {
			return rmanager.Report{}, err
		}
		w, err := c.Workload(ctx)
		if err != nil {
			return rmanager.Report{}, err
		}
		return rmanager.Report{Proxy: proxy, Cores: w.Cores, CPUUsed: w.CPUUsed, Buckets: w.Buckets}, nil
	}
	policyOf := func(name string) rmanager.PolicyInfo {
		p, ok := m.policies.ByName(name)
		if !ok {
			return rmanager.PolicyInfo{}
		}
		r, err := m.px.PolicyRing(p.Index)
		if err != nil {
			return rmanager.PolicyInfo{}
		}
		info := rmanager.PolicyInfo{Ring: p.RingName(), Replicas: r.Replicas()}
		for _, d := range r.Devices {
			if d.Weight > 0 && !slices.Contains(info.Nodes, d.Node) {
				info.Nodes = append(info.Nodes, d.Node)
			}
		}
		slices.Sort(info.Nodes)
		return info
	}
	microstoreOf := func(ctx context.Context, d *microstore.Description, account, bucket string) string {
		p, err := m.px.ContainerPolicy(ctx, account, bucket) // the container cache's, mostly
		if err != nil {
			return ""
		}
		ms, _ := d.OfPolicy(p.Names()...)
		return ms.Name
	}
	mgr, err := rmanager.New(cfg, rmanager.Sources{Describe: m.Describe, Change: m.Change, Report: report, Policy: policyOf, MicrostoreOf: microstoreOf}, log)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	m.manager = mgr
	return mgr, nil
}
