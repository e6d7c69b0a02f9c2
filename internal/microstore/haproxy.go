package microstore

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// An HAProxy configuration made from the description, for operators who put HAProxy in front
// of the proxies (docs/microstores.md): requests for a microstore's buckets go straight to its
// proxies, the rest to every proxy. HAProxy learns a request's microstore from a map of bucket
// names, written beside the configuration. The map only saves a hop: a bucket it does not
// name (made since, an S3 name two accounts use, a name a client escapes differently) goes to
// any proxy, whose load redirector passes it on; so a stale map is slower, never wrong.

// Bucket is a bucket (a container) and the microstore it belongs to ("" for none).
type Bucket struct {
	Account    string `json:"account"`
	Bucket     string `json:"bucket"`
	Microstore string `json:"microstore,omitempty"`
}

// HAProxyOptions shape the configuration.
type HAProxyOptions struct {
	// Bind is where HAProxy listens (default ":80").
	Bind string
	// Proxies are the proxies that serve buckets of no microstore; the free pool's and the
	// microstores' own are added to them (every proxy accepts every request).
	Proxies []string
	// MapFile is the path of the bucket map, as HAProxy will read it.
	MapFile string
	// Domains are the S3 front end's virtual-host domains (--domain): a request to
	// BUCKET.DOMAIN is mapped by BUCKET.
	Domains []string
}

// ErrHAProxy: the options cannot make a configuration.
var ErrHAProxy = errors.New("cannot make an HAProxy configuration")

// Backend names: the one of every proxy, and a microstore's.
const allBackend = "cairn"

func msBackend(name string) string { return "microstore_" + name }

var (
	domainRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$`)
	mapRE    = regexp.MustCompile(`^/[A-Za-z0-9._/-]+$`)
)

// HAProxy returns an HAProxy configuration (haproxy.cfg) for the description's microstores and
// the bucket map it reads (o.MapFile), from the cluster's buckets. Every name that reaches the
// configuration is checked, so that nothing in a description or a bucket list can add to it.
func (d *Description) HAProxy(o HAProxyOptions, buckets []Bucket) (config, bucketMap []byte, err error) {
	if o.Bind == "" {
		o.Bind = ":80"
	}
	if _, _, err := net.SplitHostPort(o.Bind); err != nil || strings.ContainsAny(o.Bind, " \t\r\n#") {
		return nil, nil, fmt.Errorf("%w: bind address %q: want HOST:PORT or :PORT", ErrHAProxy, o.Bind)
	}
	if !mapRE.MatchString(o.MapFile) {
		return nil, nil, fmt.Errorf("%w: map file %q: want an absolute path of letters, digits, '.', '_', '-' and '/'", ErrHAProxy, o.MapFile)
	}
	for _, dom := range o.Domains {
		if !domainRE.MatchString(dom) {
			return nil, nil, fmt.Errorf("%w: domain %q: want a DNS name in lower case", ErrHAProxy, dom)
		}
	}
	all := append(slices.Clone(o.Proxies), d.Pool...)
	for _, m := range d.Microstores {
		all = append(all, m.Proxies...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	for _, p := range all {
		if err := validProxy(p); err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrHAProxy, err)
		}
	}
	if len(all) == 0 {
		return nil, nil, fmt.Errorf("%w: no proxy: give the proxies that serve buckets of no microstore", ErrHAProxy)
	}

	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# Made by `cairn microstore haproxy` from the microstores' description, generation %d.", d.Generation)
	w("# Requests for a microstore's buckets (the map %s) go to its proxies; the rest to", o.MapFile)
	w("# every proxy, whose load redirector passes a bucket the map does not name to its microstore.")
	w("global")
	w("    maxconn 4096")
	w("")
	w("defaults")
	w("    mode http")
	w("    timeout connect 5s")
	w("    timeout http-request 1m")
	w("    timeout client 10m  # a large upload or download streams for minutes")
	w("    timeout server 10m")
	w("")
	w("frontend cairn")
	w("    bind %s", o.Bind)
	w("    # Swift: /v1/AUTH_account/container[/object] is mapped by swift:AUTH_account/container.")
	w("    acl cairn_swift path_beg /v1/")
	w("    http-request set-var(txn.cairn_account) path,field(3,/) if cairn_swift")
	w("    http-request set-var(txn.cairn_bucket) path,field(4,/) if cairn_swift")
	w("    http-request set-var(txn.cairn_key) str(swift:),concat(,txn.cairn_account,/),concat(,txn.cairn_bucket,) if cairn_swift")
	w("    # S3: a virtual host's bucket, else the path's first segment, is mapped by s3:bucket.")
	w("    http-request set-var(txn.cairn_bucket) path,field(2,/) if !cairn_swift")
	for i, dom := range o.Domains {
		w("    acl cairn_vhost%d req.hdr(host),field(1,:),lower -m end .%s", i, dom)
		w("    http-request set-var(txn.cairn_bucket) req.hdr(host),field(1,:),lower,regsub(\\.%s$,) if !cairn_swift cairn_vhost%d", strings.ReplaceAll(dom, ".", "\\."), i)
	}
	w("    http-request set-var(txn.cairn_key) str(s3:),concat(,txn.cairn_bucket,) if !cairn_swift")
	w("    use_backend %%[var(txn.cairn_key),map(%s,%s)]", o.MapFile, allBackend)
	w("    default_backend %s", allBackend)
	backend := func(name string, proxies []string) {
		w("")
		w("backend %s", name)
		w("    balance leastconn")
		w("    option httpchk")
		w("    http-check send meth GET uri /healthz")
		for i, p := range proxies {
			w("    server %s%d %s check", name, i, p)
		}
	}
	backend(allBackend, all)
	served := map[string]bool{}
	for _, m := range d.Microstores {
		if len(m.Proxies) > 0 {
			backend(msBackend(m.Name), m.Proxies)
			served[m.Name] = true
		}
	}
	return b.Bytes(), bucketMapOf(buckets, served), nil
}

// validProxy checks a proxy's address as the configuration names it.
func validProxy(p string) error {
	host, port, err := net.SplitHostPort(p)
	if err != nil || host == "" || port == "" || strings.ContainsAny(p, " \t\r\n#\"'\\") {
		return fmt.Errorf("proxy %q: want HOST:PORT", p)
	}
	return nil
}

// bucketMapOf is the map's lines, "KEY BACKEND", of the buckets of microstores that have
// proxies. A Swift container is keyed by its account and name; an S3 bucket by its name alone
// (HAProxy cannot tell a request's account), so a name that more than one account uses is left
// out, whichever microstores its buckets are in.
func bucketMapOf(buckets []Bucket, served map[string]bool) []byte {
	accounts := map[string]map[string]bool{}
	for _, bk := range buckets {
		if accounts[bk.Bucket] == nil {
			accounts[bk.Bucket] = map[string]bool{}
		}
		accounts[bk.Bucket][bk.Account] = true
	}
	var lines []string
	for _, bk := range buckets {
		if !served[bk.Microstore] || bk.Bucket == "" || bk.Account == "" {
			continue
		}
		be := msBackend(bk.Microstore)
		lines = append(lines, "swift:"+url.PathEscape("AUTH_"+bk.Account)+"/"+url.PathEscape(bk.Bucket)+" "+be)
		if len(accounts[bk.Bucket]) == 1 && s3Name(bk.Bucket) {
			lines = append(lines, "s3:"+bk.Bucket+" "+be)
		}
	}
	slices.Sort(lines)
	lines = slices.Compact(lines)
	var b bytes.Buffer
	b.WriteString("# Made by `cairn microstore haproxy`: a bucket, the backend of its microstore.\n")
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// s3Name reports whether a container's name can be an S3 bucket's in a URL as it is written:
// letters, digits, '.', '-' and '_' (S3's rules, and the legacy names' underscore).
func s3Name(name string) bool {
	if name == "" || len(name) > 255 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
