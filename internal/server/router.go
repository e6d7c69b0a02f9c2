package server

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/auth"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/microstore"
	"github.com/cairn-store/cairn/internal/policy"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/workload"
)

// The load redirector of the microstores (docs/microstores.md): every proxy accepts any
// request, and one for a bucket of a microstore whose proxies it is not among is passed to one
// of them, whole (method, path, headers, body: a signature, a presigned URL or a token holds
// there as here), and its answer passed back. A proxy serves a request itself when its bucket
// belongs to no microstore, to a microstore without proxies, or to its own; when it cannot tell
// (the bucket's owner or policy unknown, a request without a bucket); and when another proxy
// passed the request on (one hop at most, whatever the description says by then).

// hdrRouted marks a request a proxy passed on; hdrMicrostore names, on an answer, the
// microstore whose proxy served it.
const (
	hdrRouted     = "X-Cairn-Routed"
	hdrMicrostore = "X-Cairn-Microstore"
)

// routerRefresh is how often a proxy reads the description again: a change made through
// another proxy takes effect here within it.
const routerRefresh = 5 * time.Second

// describeTimeout bounds a read of the description; past it the last one is used.
const describeTimeout = 5 * time.Second

// bucketTTL is how long a bucket's microstore is remembered.
const bucketTTL = 5 * time.Second

type router struct {
	px      *proxy.Proxy
	keys    *auth.Store
	store   *microstores
	self    string // this proxy's address, as the description names proxies
	domains []string
	log     *slog.Logger
	monitor *workload.Monitor // this proxy's; nil when it monitors nothing

	mu      sync.Mutex
	desc    *microstore.Description
	read    time.Time
	buckets map[string]routeEntry // "account/bucket" or "s3:bucket" → its microstore
	passers map[string]*httputil.ReverseProxy
}

type routeEntry struct {
	microstore string // "" for none
	at         time.Time
}

func newRouter(px *proxy.Proxy, keys *auth.Store, store *microstores, self string, domains []string, monitor *workload.Monitor, log *slog.Logger) *router {
	return &router{px: px, keys: keys, store: store, self: self, domains: domains, monitor: monitor, log: log,
		buckets: map[string]routeEntry{}, passers: map[string]*httputil.ReverseProxy{}}
}

// place is the proxy's placement of a bucket made without naming a storage policy: in the
// policy of the microstore that takes its account's workload class (what this proxy's monitor
// has seen of the account's other buckets), else the default. A bucket made without a policy
// by an account the monitor cannot class, or of a class no microstore takes, is in the default.
func (rt *router) place(ctx context.Context, account, _ string) (int, bool) {
	if rt.monitor == nil || strings.HasPrefix(account, "\x00") {
		return 0, false // the reserved accounts' containers are the cluster's own
	}
	d := rt.description(ctx)
	if d == nil || len(d.Microstores) == 0 {
		return 0, false
	}
	class := rt.monitor.AccountClass(account)
	if class == workload.Unclassified {
		return 0, false
	}
	m, ok := d.ForClass(class)
	if !ok {
		return 0, false
	}
	p, ok := rt.px.Policies().ByName(m.Policy)
	if !ok || p.Deprecated {
		return 0, false // a policy being drained takes no new bucket
	}
	rt.log.DebugContext(ctx, "a bucket made without a policy is placed by its account's workload class", "account", account, "class", class.String(), "microstore", m.Name, "policy", p.Name)
	return p.Index, true
}

// changed is told of a change made through this proxy, which then takes effect here at once.
func (rt *router) changed(d *microstore.Description) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.desc, rt.read = d, time.Now()
}

// description returns the description, read again when it is older than routerRefresh (a
// failed read keeps the last one).
func (rt *router) description(ctx context.Context) *microstore.Description {
	rt.mu.Lock()
	d, fresh := rt.desc, time.Since(rt.read) < routerRefresh
	rt.mu.Unlock()
	if fresh {
		return d
	}
	// On a request's path: bounded, and not cut short by the client going away (the next
	// request would only read it again).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), describeTimeout)
	defer cancel()
	nd, err := rt.store.Describe(ctx)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.read = time.Now()
	if err != nil {
		rt.log.Warn("cannot read the microstores' description; the last one is used", "err", err)
		return rt.desc
	}
	rt.desc = nd
	return nd
}

// wrap routes the requests of next (the S3 and Swift front ends).
func (rt *router) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to, name := rt.route(r); to != "" {
			rt.pass(w, r, to, name)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// route returns the proxy to pass r to and its microstore ("" to serve it here).
func (rt *router) route(r *http.Request) (to, name string) {
	if r.Header.Get(hdrRouted) != "" || strings.HasPrefix(r.URL.Path, admin.Prefix) {
		return "", ""
	}
	ctx := r.Context()
	d := rt.description(ctx)
	if d == nil || !slices.ContainsFunc(d.Microstores, func(m microstore.Microstore) bool { return len(m.Proxies) > 0 }) {
		return "", ""
	}
	name = rt.microstoreOf(ctx, r, d)
	m, ok := d.Find(name)
	if !ok || len(m.Proxies) == 0 || slices.Contains(m.Proxies, rt.self) {
		return "", ""
	}
	return m.Proxies[rand.IntN(len(m.Proxies))], name
}

// microstoreOf returns the microstore of r's bucket ("" when it has none or cannot be told).
func (rt *router) microstoreOf(ctx context.Context, r *http.Request, d *microstore.Description) string {
	var account, bucket, key string
	if swiftRequest(r) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/v1/")
		if !ok {
			return ""
		}
		parts := strings.SplitN(rest, "/", 3)
		if len(parts) < 2 || parts[1] == "" {
			return ""
		}
		account, bucket = strings.TrimPrefix(parts[0], "AUTH_"), parts[1]
		key = account + "/" + bucket
	} else {
		bucket = s3core.ParseTarget(r, rt.domains).Bucket
		if bucket == "" {
			return ""
		}
		// S3's bucket names are the caller's account's (s3core's registry): a request for one
		// the caller's account does not have goes to the account sharing the name. The
		// signature is not checked here: the proxy that serves the request checks it.
		if ak := accessKeyOf(r); ak != "" {
			if k, err := rt.keys.Lookup(ctx, ak); err == nil {
				account = k.Account
			}
		}
		key = "s3:" + account + "/" + bucket
	}
	now := time.Now()
	rt.mu.Lock()
	e, ok := rt.buckets[key]
	rt.mu.Unlock()
	if ok && now.Sub(e.at) < bucketTTL {
		return e.microstore
	}
	var p policy.Policy
	err := meta.ErrNoContainer
	if account != "" {
		p, err = rt.px.ContainerPolicy(ctx, account, bucket)
	}
	if !swiftRequest(r) && errors.Is(err, meta.ErrNoContainer) {
		owner, oerr := rt.px.NameOwner(ctx, bucket)
		if oerr != nil {
			return "" // no such bucket, or the index unreachable: served here, which answers
		}
		p, err = rt.px.ContainerPolicy(ctx, owner, bucket)
	}
	if err != nil {
		return ""
	}
	m, _ := d.OfPolicy(p.Names()...)
	rt.mu.Lock()
	if len(rt.buckets) > 100_000 {
		clear(rt.buckets)
	}
	rt.buckets[key] = routeEntry{microstore: m.Name, at: now}
	rt.mu.Unlock()
	return m.Name
}

// accessKeyOf returns the access key a signed S3 request names (header or presigned, SigV4 or
// SigV2), "" when it names none.
func accessKeyOf(r *http.Request) string {
	if a := r.Header.Get("Authorization"); a != "" {
		if _, cred, ok := strings.Cut(a, "Credential="); ok {
			ak, _, _ := strings.Cut(cred, "/")
			return ak
		}
		if v2, ok := strings.CutPrefix(a, "AWS "); ok {
			ak, _, _ := strings.Cut(v2, ":")
			return ak
		}
		return ""
	}
	q := r.URL.Query()
	if cred := q.Get("X-Amz-Credential"); cred != "" {
		ak, _, _ := strings.Cut(cred, "/")
		return ak
	}
	return q.Get("AWSAccessKeyId")
}

// pass sends r to the proxy to, whole, and its answer back.
func (rt *router) pass(w http.ResponseWriter, r *http.Request, to, name string) {
	rt.mu.Lock()
	rp, ok := rt.passers[to]
	if !ok {
		target := &url.URL{Scheme: "http", Host: to}
		rp = &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(target)
				pr.Out.Host = pr.In.Host // signed, and the virtual host's bucket
				pr.Out.URL.RawPath = pr.In.URL.RawPath
				pr.Out.URL.Path = pr.In.URL.Path
				pr.Out.URL.RawQuery = pr.In.URL.RawQuery
				pr.Out.Header.Set(hdrRouted, "1")
			},
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				rt.log.Warn("microstore proxy unreachable", "proxy", to, "err", err)
				w.Header().Set("Retry-After", "1")
				http.Error(w, "the bucket's microstore is unreachable", http.StatusServiceUnavailable)
			},
		}
		rt.passers[to] = rp
	}
	rt.mu.Unlock()
	rp.ServeHTTP(w, r)
}

// servedBy marks the answers of a microstore's proxies with the microstore (for clients and
// tests to see where a request was served).
func (rt *router) servedBy(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(hdrRouted) != "" {
			if d := rt.description(r.Context()); d != nil {
				for _, m := range d.Microstores {
					if slices.Contains(m.Proxies, rt.self) {
						w.Header().Set(hdrMicrostore, m.Name)
					}
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}
