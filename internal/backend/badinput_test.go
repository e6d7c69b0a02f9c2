package backend_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/backend"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// A storage node answers only requests signed with the cluster secret, and refuses malformed
// ones; nothing stored changes either way.
func TestNodeRefusesBadRequests(t *testing.T) {
	addr, node := startNode(t)
	ctx := context.Background()
	if err := node.PutContainer(ctx, "d0", 1, "acct", meta.Container{Name: "box", Created: meta.Now()}, nodeclient.ContainerOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := node.PutObject(ctx, "d0", 1, meta.ObjectName{Account: "acct", Container: "box", Object: "keep"}, meta.Object{Timestamp: meta.Now(), Size: 4}, strings.NewReader("kept"), nodeclient.PutOptions{Containers: []nodeclient.ContainerUpdate{{Device: "d0", Part: 1}}}); err != nil {
		t.Fatal(err)
	}
	ts := backend.FormatTimestamp(meta.Now())
	cases := []struct {
		name, method, path string
		header             map[string]string
		want               int
	}{
		{"unsigned PUT", "PUT", "/d0/1/acct/box/keep", map[string]string{"X-Timestamp": ts}, 401},
		{"unsigned DELETE", "DELETE", "/d0/1/acct/box/keep", map[string]string{"X-Timestamp": ts}, 401},
		{"unsigned GET", "GET", "/d0/1/acct/box/keep", nil, 401},
		{"garbage signature", "DELETE", "/d0/1/acct/box/keep", map[string]string{"X-Timestamp": ts, "X-Backend-Cairn-Auth": "99999999999:00"}, 401},
		{"malformed signature", "DELETE", "/d0/1/acct/box/keep", map[string]string{"X-Timestamp": ts, "X-Backend-Cairn-Auth": "nonsense"}, 401},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, "http://"+addr+c.path, nil)
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}

	// Signed with another secret.
	other, _ := backend.NewDialer(backend.ClientConfig{Secret: []byte("another cluster")})
	defer other.Close()
	oc, _ := other.Dial(addr)
	if _, err := oc.DeleteObject(ctx, "d0", 1, meta.ObjectName{Account: "acct", Container: "box", Object: "keep"}, meta.Now(), nodeclient.DeleteOptions{}); err == nil {
		t.Error("a request signed with another secret deleted an object")
	}

	// Signed, but malformed: bad paths, timestamps, headers.
	d, _ := backend.NewDialer(backend.ClientConfig{Secret: secret})
	defer d.Close()
	c, _ := d.Dial(addr)
	bad := []struct {
		name string
		run  func() error
	}{
		{"no such device", func() error {
			_, err := c.HeadObject(ctx, "nodev", 1, meta.ObjectName{Account: "acct", Container: "box", Object: "keep"}, nodeclient.HeadOptions{})
			return err
		}},
		{"device ..", func() error {
			_, err := c.HeadObject(ctx, "..", 1, meta.ObjectName{Account: "acct", Container: "box", Object: "keep"}, nodeclient.HeadOptions{})
			return err
		}},
		{"row with a bad size", func() error {
			return c.UpdateListing(ctx, "d0", 1, "acct", "box", meta.ListEntry{Name: "x", Timestamp: -5, Size: -1}, false)
		}},
		{"several account replicas", func() error {
			return c.PutContainer(ctx, "d0", 1, "acct", meta.Container{Name: "two", Created: meta.Now()},
				nodeclient.ContainerOptions{Account: &nodeclient.AccountUpdate{Node: "h1:1,h2:2", Device: "d0,d1"}})
		}},
		{"container delete older than the container", func() error {
			return c.DeleteContainer(ctx, "d0", 1, "acct", "box", 1, nodeclient.ContainerOptions{})
		}},
	}
	for _, b := range bad {
		if err := b.run(); err == nil {
			t.Errorf("%s: accepted", b.name)
		}
	}
	r, err := node.GetObject(ctx, "d0", 1, meta.ObjectName{Account: "acct", Container: "box", Object: "keep"}, nil)
	if err != nil {
		t.Fatalf("the object is gone: %v", err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	l, _ := node.ListObjects(ctx, "d0", 1, "acct", "box", meta.ListOptions{})
	if string(got) != "kept" || len(l.Objects) != 1 {
		t.Errorf("after bad requests: object %q, listing %+v", got, l)
	}
}
