package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// asUser returns a copy of c that authenticates with the given S3 key pair instead of root's.
func (c *cli) asUser(ak, sk string) *cli {
	u := &cli{t: c.t, bin: c.bin, dir: c.dir}
	for _, kv := range c.env {
		if !strings.HasPrefix(kv, "CAIRN_ACCESS_KEY=") && !strings.HasPrefix(kv, "CAIRN_SECRET_KEY=") {
			u.env = append(u.env, kv)
		}
	}
	u.env = append(u.env, "CAIRN_ACCESS_KEY="+ak, "CAIRN_SECRET_KEY="+sk)
	return u
}

type userKeys struct {
	Account   string `json:"account"`
	User      string `json:"user"`
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key"`
	SwiftKey  string `json:"swift_key"`
}

func (c *cli) createUser(spec string, flags ...string) userKeys {
	c.t.Helper()
	out, _ := c.ok(append([]string{"admin", "user", "create", spec, "--json"}, flags...)...)
	var k userKeys
	if err := json.Unmarshal([]byte(out), &k); err != nil || k.AccessKey == "" || k.SecretKey == "" || k.SwiftKey == "" {
		c.t.Fatalf("user create %s --json printed %q (%v)", spec, out, err)
	}
	return k
}

// TestAdminTenants drives `cairn admin` through the real binary: accounts and users made with
// the root key, the printed S3 keys used with cairn put/ls/get, and a second tenant that cannot
// see the first one's bucket. The tenants survive a restart.
func TestAdminTenants(t *testing.T) {
	dataDir := t.TempDir()
	s := Start(t, Options{DataDir: dataDir})
	root := newCLI(t, s)

	root.ok("admin", "account", "create", "acme")
	root.ok("admin", "account", "create", "other")
	root.fails("AccountExists", "admin", "account", "create", "acme")
	alice := root.createUser("acme:alice", "--admin")
	olga := root.createUser("other:olga", "--admin")
	if alice.Account != "acme" || alice.User != "alice" {
		t.Fatalf("created %+v", alice)
	}

	a := root.asUser(alice.AccessKey, alice.SecretKey)
	a.writeFile("cat.txt", []byte("meow"))
	a.ok("mb", "photos")
	a.ok("put", "cat.txt", "photos/")
	if out, _ := a.ok("ls"); out != "photos\n" {
		t.Errorf("alice's ls: %q", out)
	}
	if out, _ := a.ok("ls", "photos"); !strings.Contains(out, "cat.txt") {
		t.Errorf("alice's ls photos: %q", out)
	}
	if out, _ := a.ok("get", "photos/cat.txt", "-"); out != "meow" {
		t.Errorf("alice's get: %q", out)
	}

	// The other tenant sees nothing of it, and the root account neither.
	o := root.asUser(olga.AccessKey, olga.SecretKey)
	if out, _ := o.ok("ls"); out != "" {
		t.Errorf("olga's ls shows %q", out)
	}
	o.fails(`bucket "photos" does not exist`, "ls", "photos")
	o.fails(`bucket "photos" does not exist`, "get", "photos/cat.txt", "-")
	if out, _ := root.ok("ls"); out != "" {
		t.Errorf("root's ls shows %q", out)
	}
	// A user of acme who is not its administrator gets nothing that is not granted to it.
	viewer := root.createUser("acme:viewer")
	v := root.asUser(viewer.AccessKey, viewer.SecretKey)
	v.fails("AccessDenied", "get", "photos/cat.txt", "-")
	v.fails("AccessDenied", "ls")
	root.ok("admin", "user", "delete", "acme:viewer")

	// Usage, and the admin API refusing a tenant's key.
	// In a cluster, a container's usage reaches its account's replicas through the storage
	// nodes' updater (Swift's container updater), seconds later.
	var out string
	var err error
	var u struct{ Bytes, Objects, Containers int64 }
	for end := time.Now().Add(accountPropagation()); ; time.Sleep(200 * time.Millisecond) {
		out, _ = root.ok("admin", "account", "usage", "acme", "--json")
		err = json.Unmarshal([]byte(out), &u)
		if (err == nil && u.Bytes == 4 && u.Objects == 1 && u.Containers == 1) || time.Now().After(end) {
			break
		}
	}
	if err != nil || u.Bytes != 4 || u.Objects != 1 || u.Containers != 1 {
		t.Errorf("usage: %q (%v)", out, err)
	}
	a.fails("only the root key may use the admin API", "admin", "account", "list")
	root.fails("NoSuchAccount", "admin", "account", "usage", "nope")
	root.fails("AccountNotEmpty", "admin", "account", "delete", "acme")

	// The tenants file holds secrets: owner only. (A cluster keeps tenants in the cluster.)
	if ClusterTopology() == nil {
		if st, err := os.Stat(filepath.Join(dataDir, "tenants.json")); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("tenants.json: %v, %v; want mode 0600", st, err)
		}
	}

	// After a restart the same keys work.
	if err := s.Stop(StopTimeout); err != nil {
		t.Fatal(err)
	}
	s2 := Start(t, Options{DataDir: dataDir, AccessKey: s.AccessKey, SecretKey: s.SecretKey})
	root2 := newCLI(t, s2)
	a2 := root2.asUser(alice.AccessKey, alice.SecretKey)
	if out, _ := a2.ok("get", "photos/cat.txt", "-"); out != "meow" {
		t.Errorf("alice's get after restart: %q", out)
	}

	// Rotation and deletion take effect at once.
	out, _ = root2.ok("admin", "user", "rotate-keys", "acme:alice", "--json")
	var nk userKeys
	if err := json.Unmarshal([]byte(out), &nk); err != nil || nk.AccessKey == alice.AccessKey {
		t.Fatalf("rotate-keys: %q (%v)", out, err)
	}
	a2.fails("InvalidAccessKeyId", "ls")
	root2.asUser(nk.AccessKey, nk.SecretKey).ok("ls", "photos")
	root2.ok("admin", "user", "delete", "other:olga")
	root2.asUser(olga.AccessKey, olga.SecretKey).fails("InvalidAccessKeyId", "ls")
	root2.ok("admin", "account", "delete", "other")
	if out, _ := root2.ok("admin", "account", "list"); strings.Contains(out, "other") || !strings.Contains(out, "acme") {
		t.Errorf("account list after delete:\n%s", out)
	}
}
