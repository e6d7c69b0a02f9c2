package backend

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// A container's policy crosses as Swift's X-Backend-Storage-Policy-Index (or -Default, for a
// create that named none), never as Cairn's system metadata; an object request of a policy
// other than 0 names it to the node.
func TestPolicyHeadersAsSwiftSendsThem(t *testing.T) {
	var mu sync.Mutex
	var got []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Clone())
		mu.Unlock()
		switch {
		case r.Method == http.MethodPut:
			w.WriteHeader(http.StatusCreated)
		case strings.Count(r.URL.Path, "/") == 4: // a container HEAD, as Swift's server answers it
			w.Header().Set("X-Put-Timestamp", "1700000000.00000")
			w.Header().Set(hdrPolicyIndex, "2")
			w.WriteHeader(http.StatusNoContent)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	d, err := NewDialer(ClientConfig{Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c, err := d.Dial(strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	box := meta.Container{Name: "box", Created: meta.Now(), Meta: map[string]string{meta.ContainerPolicyKey: "2", "sys:k": "v"}}
	if err := c.PutContainer(ctx, "d0", 1, "acct", box, nodeclient.ContainerOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.PutContainer(ctx, "d0", 1, "acct", box, nodeclient.ContainerOptions{DefaultPolicy: true}); err != nil {
		t.Fatal(err)
	}
	head, err := c.HeadContainer(ctx, "d0", 1, "acct", "box")
	if idx, ok := head.PolicyIndex(); err != nil || !ok || idx != 2 {
		t.Fatalf("HEAD of a Swift container in policy 2: %v %v %v", idx, ok, err)
	}
	c.HeadObject(nodeclient.WithPolicy(ctx, 2), "d0", 1, meta.ObjectName{Account: "acct", Container: "box", Object: "o"}, nodeclient.HeadOptions{})
	c.HeadObject(ctx, "d0", 1, meta.ObjectName{Account: "acct", Container: "box", Object: "o"}, nodeclient.HeadOptions{})

	mu.Lock()
	defer mu.Unlock()
	if len(got) != 5 {
		t.Fatalf("%d requests", len(got))
	}
	for i, h := range got[:2] {
		for k := range h {
			if strings.Contains(strings.ToLower(k), "storage-policy") && strings.HasPrefix(k, "X-Container-Sysmeta") {
				t.Errorf("create %d: the policy travelled as system metadata (%s)", i, k)
			}
		}
		if h.Get("X-Container-Sysmeta-Cairn-Sys%3ak") != "v" {
			t.Errorf("create %d: other system metadata lost: %v", i, h)
		}
	}
	if got[0].Get(hdrPolicyIndex) != "2" || got[0].Get(hdrPolicyDefault) != "" {
		t.Errorf("a create naming its policy: %q %q", got[0].Get(hdrPolicyIndex), got[0].Get(hdrPolicyDefault))
	}
	if got[1].Get(hdrPolicyIndex) != "" || got[1].Get(hdrPolicyDefault) != "2" {
		t.Errorf("a create given the default: %q %q", got[1].Get(hdrPolicyIndex), got[1].Get(hdrPolicyDefault))
	}
	if got[3].Get(hdrPolicyIndex) != "2" || got[4].Get(hdrPolicyIndex) != "" {
		t.Errorf("object requests: policy %q (want 2) and %q (want none)", got[3].Get(hdrPolicyIndex), got[4].Get(hdrPolicyIndex))
	}
}

// policyNode keeps the container the handler creates.
type policyNode struct {
	nodeclient.Client // unused methods: nil, they panic
	c                 meta.Container
}

func (n *policyNode) PutContainer(_ context.Context, _ string, _ uint32, _ string, c meta.Container, _ nodeclient.ContainerOptions) error {
	n.c = c
	return nil
}

func (n *policyNode) HeadContainer(context.Context, string, uint32, string, string) (meta.Container, error) {
	return n.c, nil
}

// Cairn's handler stores the policy a create names, else the default it was given, and
// answers it as Swift's container servers do.
func TestHandlerKeepsTheContainersPolicy(t *testing.T) {
	node := &policyNode{}
	h, err := NewHandler(HandlerConfig{Node: node, Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		header map[string]string
		want   string
		code   int
	}{
		{map[string]string{"X-Timestamp": "1700000000.00000", hdrPolicyIndex: "1"}, "1", http.StatusCreated},
		{map[string]string{"X-Timestamp": "1700000000.00000", hdrPolicyDefault: "3"}, "3", http.StatusCreated},
		{map[string]string{"X-Timestamp": "1700000000.00000"}, "", http.StatusCreated},
		{map[string]string{"X-Timestamp": "1700000000.00000", hdrPolicyIndex: "gold"}, "", http.StatusBadRequest},
	} {
		node.c = meta.Container{}
		if code := serve(t, h, "PUT", "/d0/7/AUTH_acct/box", tc.header); code != tc.code {
			t.Fatalf("%v: status %d, want %d", tc.header, code, tc.code)
		}
		if node.c.Meta[meta.ContainerPolicyKey] != tc.want {
			t.Errorf("%v: stored policy %q, want %q", tc.header, node.c.Meta[meta.ContainerPolicyKey], tc.want)
		}
	}
	node.c = meta.Container{Name: "box", Meta: map[string]string{meta.ContainerPolicyKey: "4"}}
	r := httptest.NewRequest("HEAD", "/d0/7/AUTH_acct/box", nil)
	sign(r, testSecret, time.Now())
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Header().Get(hdrPolicyIndex) != "4" {
		t.Fatalf("HEAD answers policy %q, want 4 (%v)", w.Header().Get(hdrPolicyIndex), w.Header())
	}
}
