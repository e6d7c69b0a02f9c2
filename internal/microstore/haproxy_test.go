package microstore

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func haproxyDescription() *Description {
	return &Description{Generation: 7, Pool: []string{"10.0.0.6:8080"}, Microstores: []Microstore{
		{Name: "large", Policy: "silver", Proxies: []string{"10.0.0.3:8080", "10.0.0.4:8080"}},
		{Name: "small", Policy: "gold", Proxies: []string{"10.0.0.1:8080"}},
		{Name: "idle", Policy: "bronze"},
	}}
}

// The map names each bucket of a microstore with proxies by its Swift path, and by its S3 name
// when one account alone uses that name; buckets of no microstore or of one without proxies
// are left to every proxy.
func TestHAProxyBucketMap(t *testing.T) {
	buckets := []Bucket{
		{Account: "acme", Bucket: "backups", Microstore: "large"},
		{Account: "acme", Bucket: "site", Microstore: "small"},
		{Account: "zeta", Bucket: "site"}, // another account's bucket of the same name
		{Account: "acme", Bucket: "odd name/é", Microstore: "large"},
		{Account: "acme", Bucket: "archive", Microstore: "idle"},
		{Account: "acme", Bucket: "plain"},
	}
	cfg, m, err := haproxyDescription().HAProxy(HAProxyOptions{Bind: "127.0.0.1:8000", Proxies: []string{"10.0.0.9:8080"}, MapFile: "/etc/haproxy/cairn-buckets.map"}, buckets)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(m)), "\n") {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	want := []string{
		"s3:backups microstore_large",
		"swift:AUTH_acme/backups microstore_large",
		"swift:AUTH_acme/odd%20name%2F%C3%A9 microstore_large",
		"swift:AUTH_acme/site microstore_small",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("map:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	for _, s := range []string{
		"bind 127.0.0.1:8000",
		"map(/etc/haproxy/cairn-buckets.map,cairn)",
		"backend microstore_large", "server microstore_large1 10.0.0.4:8080 check",
		"backend microstore_small",
		"server cairn0 10.0.0.1:8080 check", "server cairn3 10.0.0.6:8080 check", "server cairn4 10.0.0.9:8080 check", // every proxy: the pool's and the microstores' too
	} {
		if !strings.Contains(string(cfg), s) {
			t.Errorf("the configuration lacks %q:\n%s", s, cfg)
		}
	}
	if strings.Contains(string(cfg), "microstore_idle") {
		t.Error("a backend for a microstore without proxies")
	}
}

// Nothing from the options, the description or the buckets can add a line to the configuration.
func TestHAProxyRefusesWhatWouldInject(t *testing.T) {
	d := haproxyDescription()
	good := HAProxyOptions{MapFile: "/etc/haproxy/cairn.map"}
	for _, tc := range []struct {
		name string
		o    HAProxyOptions
		d    *Description
	}{
		{"bind with a newline", HAProxyOptions{Bind: ":80\n    stats enable", MapFile: good.MapFile}, d},
		{"bind without a port", HAProxyOptions{Bind: "0.0.0.0", MapFile: good.MapFile}, d},
		{"relative map", HAProxyOptions{MapFile: "cairn.map"}, d},
		{"map with a space", HAProxyOptions{MapFile: "/etc/haproxy/a b.map"}, d},
		{"domain with a regex", HAProxyOptions{MapFile: good.MapFile, Domains: []string{"s3.example.com$|.*"}}, d},
		{"proxy with a newline", HAProxyOptions{MapFile: good.MapFile, Proxies: []string{"10.0.0.9:80\nbackend x"}}, d},
		{"no proxy at all", good, &Description{}},
	} {
		if _, _, err := tc.d.HAProxy(tc.o, nil); !errors.Is(err, ErrHAProxy) {
			t.Errorf("%s: %v, want ErrHAProxy", tc.name, err)
		}
	}
	_, m, err := d.HAProxy(good, []Bucket{{Account: "a", Bucket: "x\nbackend evil", Microstore: "large"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(m), "\nbackend evil") {
		t.Errorf("a bucket's name broke a map line:\n%s", m)
	}
}

// HAProxy itself accepts the configuration (haproxy -c), when it is installed here
// (scripts/install-test-deps.sh installs it).
func TestHAProxyChecksTheConfiguration(t *testing.T) {
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		bin = "/usr/sbin/haproxy" // not on a user's PATH
		if _, err := os.Stat(bin); err != nil {
			t.Skip("no haproxy here (scripts/install-test-deps.sh installs it)")
		}
	}
	dir := t.TempDir()
	o := HAProxyOptions{Bind: "127.0.0.1:18080", Proxies: []string{"127.0.0.1:9"}, MapFile: filepath.Join(dir, "buckets.map"), Domains: []string{"s3.example.com"}}
	cfg, m, err := haproxyDescription().HAProxy(o, []Bucket{{Account: "acme", Bucket: "backups", Microstore: "large"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.MapFile, m, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "-c", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c: %v\n%s\n%s", err, out, cfg)
	}
}
