package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/auth"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/workload"
)

// cpuWindow bounds how far back a proxy's CPU is measured: the resource manager counts a
// saturated proxy's CPU (rmanager.Saturated), and over a whole workload window (5 minutes by
// default) a proxy that became busy would take most of the window to look saturated.
const cpuWindow = 10 * time.Second

// cpuUsed measures this process's CPU over the last cpuWindow, or the workload monitor's
// window when shorter (nil without a monitor).
func cpuUsed(m *workload.Monitor) func() float64 {
	if m == nil {
		return nil
	}
	meter := newCPUMeter(min(m.Window(), cpuWindow), nil)
	return func() float64 { return meter.used(time.Now()) }
}

// withAdmin mounts the admin API (internal/admin) in front of next: path-style requests under
// /admin/v1/ go to it, everything else to next. A virtual-hosted request (BUCKET.DOMAIN) is
// always next's, so that only path-style keys "v1/..." of a bucket named "admin" are shadowed.
func withAdmin(cfg Config, px *proxy.Proxy, keys *auth.Store, status admin.StatusFunc, ms admin.MicrostoreStore, next http.Handler) (http.Handler, error) {
	h, err := admin.New(admin.Config{Store: keys, Usage: proxyUsage(px), Status: status, ACLMigration: aclMigration(px, keys), Region: cfg.Region, Logger: cfg.Logger, KMS: cfg.sseKeys, Workload: cfg.workload,
		Cores: processCores(), CPUUsed: cpuUsed(cfg.workload), Microstores: ms})
	if err != nil {
		return nil, fmt.Errorf("server: admin API: %w", err)
	}
	domains := make([]string, len(cfg.Domains))
	for i, d := range cfg.Domains {
		domains[i] = "." + strings.ToLower(d)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, admin.Prefix) && !virtualHosted(r.Host, domains) {
			h.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	}), nil
}

func virtualHosted(host string, domainSuffixes []string) bool {
	host = strings.ToLower(host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	for _, d := range domainSuffixes {
		if b, ok := strings.CutSuffix(host, d); ok && b != "" {
			return true
		}
	}
	return false
}

// proxyUsage reports an account's usage from the proxy: bytes and objects from the account's
// counters (which include parts of multipart uploads in progress, as they take space), and
// containers by listing, because the counters also count the containers Cairn reserves for
// uploads, which no client sees.
func proxyUsage(px *proxy.Proxy) admin.UsageFunc {
	return func(ctx context.Context, account string) (admin.Usage, error) {
		a, err := px.HeadAccount(ctx, account)
		if err != nil && !errors.Is(err, meta.ErrNotFound) {
			return admin.Usage{}, fmt.Errorf("account totals: %w", err)
		}
		u := admin.Usage{Bytes: a.BytesUsed, Objects: a.ObjectCount}
		var opts meta.ListOptions
		for {
			l, err := px.ListContainers(ctx, account, opts)
			if errors.Is(err, meta.ErrNotFound) { // an account that never had a container
				break
			}
			if err != nil {
				return admin.Usage{}, fmt.Errorf("list containers: %w", err)
			}
			u.Containers += int64(len(l.Containers))
			if !l.Truncated || l.NextMarker == "" {
				break
			}
			opts.Marker = l.NextMarker
		}
		return u, nil
	}
}
