package expirer

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/storage"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func newProxy(t *testing.T) *proxy.Proxy {
	t.Helper()
	node, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: "d0", Dir: t.TempDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	px, err := proxy.New(proxy.Config{Ring: ring.SingleDevice("local", "d0", 6, ""), Dialer: nodeclient.Local{Client: node}, ContainerCacheTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	return px
}

// put writes an object as a front end does: the expiry queued first, then the object.
func put(t *testing.T, px *proxy.Proxy, name string, at int64) meta.ObjectName {
	t.Helper()
	ctx := context.Background()
	n := meta.ObjectName{Account: "acme", Container: "box", Object: name}
	obj := meta.Object{Size: 5}
	if at > 0 {
		if err := px.QueueExpiry(ctx, n, at); err != nil {
			t.Fatal(err)
		}
		obj.SysMeta = map[string]string{meta.SysDeleteAt: strconv.FormatInt(at, 10)}
	}
	if _, err := px.PutObject(ctx, n, obj, strings.NewReader("hello"), proxy.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestExpirerPass(t *testing.T) {
	ctx := context.Background()
	px := newProxy(t)
	if err := px.CreateContainer(ctx, "acme", "box", nil); err != nil {
		t.Fatal(err)
	}
	base := time.Unix(1_800_000_000, 0)
	clk := &clock{t: base}
	d, err := New(Config{Proxy: px, Now: clk.now, PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	soon := base.Unix() + 10
	put(t, px, "a", soon)
	put(t, px, "b", soon)
	put(t, px, "c", soon)
	put(t, px, "later", base.Unix()+7200)
	put(t, px, "plain", 0)
	// Overwritten without an expiry: the queued entry is stale.
	put(t, px, "rewritten", soon)
	put(t, px, "rewritten", 0)
	// Expiry moved later: the first entry is stale, the second is due then.
	put(t, px, "moved", soon)
	put(t, px, "moved", base.Unix()+7200)

	if res, err := d.Pass(ctx); err != nil || res != (PassResult{}) {
		t.Fatalf("pass before anything is due: %+v, %v", res, err)
	}
	clk.set(base.Add(time.Minute))
	res, err := d.Pass(ctx)
	if err != nil || res.Expired != 3 || res.Stale != 2 || res.Errors != 0 {
		t.Fatalf("first due pass: %+v, %v", res, err)
	}
	l, err := px.ListObjects(ctx, "acme", "box", meta.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range l.Objects {
		names = append(names, o.Name)
	}
	if strings.Join(names, ",") != "later,moved,plain,rewritten" {
		t.Fatalf("left after expiry: %v", names)
	}
	c, _ := px.HeadContainer(ctx, "acme", "box")
	if c.ObjectCount != 4 || c.BytesUsed != 20 {
		t.Errorf("usage after expiry: %+v", c)
	}
	// Nothing is due again until the later expiries.
	if res, err := d.Pass(ctx); err != nil || res != (PassResult{}) {
		t.Fatalf("second pass: %+v, %v", res, err)
	}
	clk.set(base.Add(3 * time.Hour))
	if res, err := d.Pass(ctx); err != nil || res.Expired != 2 {
		t.Fatalf("later pass: %+v, %v", res, err)
	}
	// The queue's emptied buckets are gone.
	if q, err := px.ListContainers(ctx, proxy.ExpiringAccount, meta.ListOptions{}); err != nil || len(q.Containers) != 0 {
		t.Fatalf("queue buckets left: %+v, %v", q.Containers, err)
	}
}

func TestExpirerStartStop(t *testing.T) {
	px := newProxy(t)
	ctx := context.Background()
	if err := px.CreateContainer(ctx, "acme", "box", nil); err != nil {
		t.Fatal(err)
	}
	n := put(t, px, "o", time.Now().Unix()-1)
	d, err := New(Config{Proxy: px, Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	d.Start()
	deadline := time.Now().Add(time.Minute) // only catches a daemon that never expires it
	for {
		if _, err := px.HeadObject(ctx, n); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the running daemon did not expire the object")
		}
		time.Sleep(10 * time.Millisecond)
	}
	d.Stop()
	d.Stop() // idempotent
}

func TestConfigValidate(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("no proxy accepted")
	}
	if _, err := New(Config{Proxy: &proxy.Proxy{}, Interval: -1}); err == nil {
		t.Error("negative interval accepted")
	}
}

// TestExpirerNeverDeletesAFreshWrite races an expirer pass against overwrites, without an
// expiry, of objects whose expiry has just passed (on the real clock, as in production: every
// overwrite is stamped after the expiry). Whichever commits first, every object must exist
// afterwards: either its overwrite came first (and the expiry no longer holds), or the delete
// did (and the overwrite, newer, recreated it). A check-then-delete expirer loses an overwrite
// that lands between its check and its delete; one that deletes as of "now" loses an overwrite
// stamped before its delete but committed after.
func TestExpirerNeverDeletesAFreshWrite(t *testing.T) {
	ctx := context.Background()
	px := newProxy(t)
	if err := px.CreateContainer(ctx, "acme", "box", nil); err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{Proxy: px})
	if err != nil {
		t.Fatal(err)
	}
	rounds, objects := 4, 150
	if testing.Short() {
		rounds = 1
	}
	for round := range rounds {
		at := time.Now().Unix() + 1
		names := make([]meta.ObjectName, objects)
		for i := range names {
			names[i] = put(t, px, fmt.Sprintf("r%d-obj-%d", round, i), at)
		}
		time.Sleep(time.Until(time.Unix(at, 0)) + 50*time.Millisecond)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := d.Pass(ctx); err != nil {
				t.Error(err)
			}
		}()
		for _, name := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := px.PutObject(ctx, name, meta.Object{Size: 5}, strings.NewReader("fresh"), proxy.PutOptions{}); err != nil {
					t.Errorf("overwrite of %s: %v", name.Object, err)
				}
			}()
		}
		wg.Wait()
		for _, name := range names {
			if _, err := px.HeadObject(ctx, name); err != nil {
				t.Fatalf("round %d: the overwrite of %s was lost to the expirer: %v", round, name.Object, err)
			}
		}
	}
}
