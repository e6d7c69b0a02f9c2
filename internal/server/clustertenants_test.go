package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/auth"
	"github.com/cairn-store/cairn/internal/backend"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/storage"
)

// testCluster starts three storage nodes, each behind the node protocol on a loopback port as
// a storage process serves it, every partition on all three, and returns a maker of proxies
// that reach them as proxy processes do (signed with the cluster secret), and the nodes'
// directories.
func testCluster(t *testing.T) (newProxy func() *proxy.Proxy, dirs []string) {
	t.Helper()
	const partPower = 4
	r := &ring.Ring{PartPower: partPower}
	for i := range 3 {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("node%d", i))
		n, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: "d0", Dir: dir}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		h, err := backend.NewHandler(backend.HandlerConfig{Node: n, Secret: []byte(testClusterSecret)})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		dirs = append(dirs, dir)
		r.Devices = append(r.Devices, ring.Device{ID: i, Zone: i, Node: srv.Listener.Addr().String(), Name: "d0", Weight: 1})
		row := make([]int, 1<<partPower)
		for p := range row {
			row[p] = i
		}
		r.Assignments = append(r.Assignments, row)
	}
	return func() *proxy.Proxy {
		d, err := backend.NewDialer(backend.ClientConfig{Secret: []byte(testClusterSecret)})
		if err != nil {
			t.Fatal(err)
		}
		px, err := proxy.New(proxy.Config{Ring: r, Dialer: d, ContainerCacheTTL: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(px.Close)
		return px
	}, dirs
}

const testClusterSecret = "the cluster secret of the tests"

func openClusterTenants(t *testing.T, px *proxy.Proxy, secret string) (*auth.Store, error) {
	t.Helper()
	s, err := auth.OpenCluster(context.Background(), auth.Config{RootAccessKey: "cluster-root", RootSecretKey: "cluster-root-secret"},
		auth.ClusterConfig{Blob: NewTenantsBlob(px), Secret: []byte(secret), PollInterval: -1})
	if err == nil {
		t.Cleanup(s.Close)
	}
	return s, err
}

// Two proxies over one cluster, each with its tenant store in the cluster: they behave as one
// for S3 keys, Swift keys and Swift tokens, changes through both survive, and what is stored
// on the nodes is sealed.
func TestClusterTenantsAcrossProxies(t *testing.T) {
	ctx := context.Background()
	newProxy, dirs := testCluster(t)
	pxA, pxB := newProxy(), newProxy()
	a, err := openClusterTenants(t, pxA, testClusterSecret)
	if err != nil {
		t.Fatal(err)
	}
	b, err := openClusterTenants(t, pxB, testClusterSecret)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := a.CreateAccount(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	bob, err := a.CreateUser(ctx, "acme", "bob", true)
	if err != nil {
		t.Fatal(err)
	}
	if k, err := b.Lookup(ctx, bob.AccessKey); err != nil || k.SecretKey != bob.SecretKey {
		t.Fatalf("S3 key made through A, looked up through B: %+v, %v", k, err)
	}
	if _, err := b.AuthenticateSwift(ctx, "acme", "bob", bob.SwiftKey); err != nil {
		t.Fatalf("Swift key made through A, checked through B: %v", err)
	}

	// Swift front ends wired as a proxy process wires them: a token from A is good at B.
	swiftA, swiftB := serveSwift(t, pxA, a), serveSwift(t, pxB, b)
	tok := swiftToken(t, swiftA, "acme:bob", bob.SwiftKey)
	if st := swiftStatus(t, "PUT", swiftB+"/v1/AUTH_acme/made-at-b", tok); st != http.StatusCreated {
		t.Fatalf("PUT through B with A's token: %d", st)
	}
	if st := swiftStatus(t, "HEAD", swiftA+"/v1/AUTH_acme/made-at-b", tok); st != http.StatusNoContent {
		t.Fatalf("HEAD through A: %d", st)
	}
	// The tenants object is out of every client's reach, root's included.
	root := swiftToken(t, swiftA, "root:root", "cluster-root-secret")
	for _, path := range []string{"/v1/AUTH_%00cairn", "/v1/AUTH_%00cairn/auth", "/v1/AUTH_%00cairn/auth/tenants"} {
		if st := swiftStatus(t, "GET", swiftB+path, root); st != http.StatusNotFound {
			t.Errorf("root GET %s: %d, want 404", path, st)
		}
	}

	// Changes through both proxies at once all survive.
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 10 {
		for name, s := range map[string]*auth.Store{"a": a, "b": b} {
			wg.Go(func() {
				_, err := s.CreateAccount(ctx, fmt.Sprintf("%s-%d", name, i))
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*auth.Store{a, b} {
		if err := s.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if accts, _ := s.Accounts(ctx); len(accts) != 22 {
			t.Errorf("%d accounts after concurrent creations through two proxies, want 22", len(accts))
		}
	}

	// A key rotated through A stops working through B, and so does a token of the old key.
	rotated, err := a.RotateKeys(ctx, "acme", "bob")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lookup(ctx, bob.AccessKey); !errors.Is(err, auth.ErrUnknownKey) {
		t.Errorf("rotated S3 key through B: %v", err)
	}
	if _, err := b.AuthenticateSwift(ctx, "acme", "bob", bob.SwiftKey); !errors.Is(err, auth.ErrBadSwiftKey) {
		t.Errorf("rotated Swift key through B: %v", err)
	}
	if st := swiftStatus(t, "HEAD", swiftB+"/v1/AUTH_acme/made-at-b", tok); st != http.StatusUnauthorized {
		t.Errorf("token of a rotated key through B: %d", st)
	}
	tok = swiftToken(t, swiftB, "acme:bob", rotated.SwiftKey)
	if err := a.DeleteUser(ctx, "acme", "bob"); err != nil {
		t.Fatal(err)
	}
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lookup(ctx, rotated.AccessKey); !errors.Is(err, auth.ErrUnknownKey) {
		t.Errorf("deleted user's S3 key through B: %v", err)
	}
	if st := swiftStatus(t, "HEAD", swiftB+"/v1/AUTH_acme", tok); st != http.StatusUnauthorized {
		t.Errorf("deleted user's token through B: %d", st)
	}

	// The nodes' files hold no tenant secret in clear (a smoke check: the object is sealed).
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			data, _ := os.ReadFile(path)
			if bytes.Contains(data, []byte(rotated.SecretKey)) || bytes.Contains(data, []byte(rotated.SwiftKey)) {
				t.Errorf("%s holds a tenant's secret in clear", path)
			}
			return nil
		})
	}

	// Another secret is refused, and so is a changed byte.
	if _, err := openClusterTenants(t, newProxy(), "not the cluster secret of the tests"); !errors.Is(err, auth.ErrWrongClusterSecret) {
		t.Errorf("another cluster secret: %v", err)
	}
	name := meta.ObjectName{Account: TenantsAccount, Container: TenantsContainer, Object: TenantsObject}
	r, err := pxA.GetObject(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	sealed[len(sealed)-5] ^= 0x40
	if _, err := pxA.PutObject(ctx, name, meta.Object{Size: int64(len(sealed))}, bytes.NewReader(sealed), proxy.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := openClusterTenants(t, newProxy(), testClusterSecret); !errors.Is(err, auth.ErrTenantsCorrupt) {
		t.Errorf("a changed byte: %v", err)
	}
	if err := b.Refresh(ctx); !errors.Is(err, auth.ErrTenantsCorrupt) {
		t.Errorf("refresh from a changed object: %v", err)
	}
	if _, err := b.Account(ctx, "a-3"); err != nil {
		t.Errorf("the proxy forgot its tenants on meeting a changed object: %v", err)
	}
}

// Proxies starting together on a new cluster create one tenants object between them.
func TestClusterTenantsBootstrap(t *testing.T) {
	newProxy, _ := testCluster(t)
	stores := make([]*auth.Store, 4)
	errs := make([]error, len(stores))
	pxs := make([]*proxy.Proxy, len(stores))
	for i := range pxs {
		pxs[i] = newProxy()
	}
	var wg sync.WaitGroup
	for i := range stores {
		wg.Go(func() {
			stores[i], errs[i] = auth.OpenCluster(context.Background(), auth.Config{RootAccessKey: "cluster-root", RootSecretKey: "cluster-root-secret"},
				auth.ClusterConfig{Blob: NewTenantsBlob(pxs[i]), Secret: []byte(testClusterSecret), PollInterval: -1})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("proxy %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	first, _ := stores[0].Account(context.Background(), auth.RootAccount)
	for _, s := range stores[1:] {
		if a, _ := s.Account(context.Background(), auth.RootAccount); !a.Created.Equal(first.Created) {
			t.Errorf("proxies disagree on the root account: created %v and %v", first.Created, a.Created)
		}
	}
}

func serveSwift(t *testing.T, px *proxy.Proxy, keys *auth.Store) string {
	t.Helper()
	h, err := newSwift(Config{}, px, keys, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func swiftToken(t *testing.T, url, user, key string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/auth/v1.0", nil)
	req.Header.Set("X-Auth-User", user)
	req.Header.Set("X-Auth-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("Swift auth as %s: %s", user, resp.Status)
	}
	return resp.Header.Get("X-Auth-Token")
}

func swiftStatus(t *testing.T, method, url, token string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	req.Header.Set("X-Auth-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// unreachable is a dialer of storage nodes that are all away.
type unreachable struct{}

func (unreachable) Dial(node string) (nodeclient.Client, error) {
	return nil, fmt.Errorf("node %s is away", node)
}

// A cluster document's write that no node took is reported as of unknown outcome (a 503 may
// have been made somewhere), which the tenant store looks for rather than taking as refused;
// a read of it as unavailable, not as missing.
func TestClusterObjectWhileTheNodesAreAway(t *testing.T) {
	r := &ring.Ring{PartPower: 2}
	for i := range 3 {
		r.Devices = append(r.Devices, ring.Device{ID: i, Zone: i, Node: fmt.Sprintf("node%d:1", i), Name: "d0", Weight: 1})
		r.Assignments = append(r.Assignments, []int{i, i, i, i})
	}
	px, err := proxy.New(proxy.Config{Ring: r, Dialer: unreachable{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(px.Close)
	b := NewTenantsBlob(px)
	if _, err := b.Store(context.Background(), []byte("x"), "v1"); !errors.Is(err, auth.ErrBlobUnknown) {
		t.Errorf("a write no node took: %v, want ErrBlobUnknown", err)
	}
	if _, _, err := b.Load(context.Background()); err == nil || errors.Is(err, auth.ErrBlobNotFound) {
		t.Errorf("a read no node answered: %v, want an error other than not found", err)
	}
}
