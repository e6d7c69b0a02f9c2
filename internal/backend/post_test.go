package backend

import (
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// swiftObjectServer keeps one object's metadata as a Swift object server does: a PUT sets all
// of it; a POST replaces the user metadata and the transient system metadata and keeps the
// system metadata (obj/server.py POST, diskfile's merge of .data and .meta).
type swiftObjectServer struct {
	mu                   sync.Mutex
	data, meta           http.Header
	heads, posts, writes int
}

func (s *swiftObjectServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := func(from http.Header, prefixes ...string) http.Header {
		out := http.Header{}
		for k, v := range from {
			for _, p := range prefixes {
				if strings.HasPrefix(k, http.CanonicalHeaderKey(p)) {
					out[k] = v
				}
			}
		}
		return out
	}
	switch r.Method {
	case http.MethodPut:
		io.Copy(io.Discard, r.Body)
		s.writes++
		s.data = keep(r.Header, "X-Object-Sysmeta-", "X-Object-Meta-", "X-Object-Transient-Sysmeta-", "X-Timestamp", "Content-Type")
		s.meta = nil
		w.WriteHeader(http.StatusCreated)
	case http.MethodPost:
		s.posts++
		s.meta = keep(r.Header, "X-Object-Meta-", "X-Object-Transient-Sysmeta-", "X-Timestamp", "Content-Type")
		w.WriteHeader(http.StatusAccepted)
	case http.MethodHead, http.MethodGet:
		if r.Method == http.MethodHead {
			s.heads++
		}
		hdr := keep(s.data, "X-Object-Sysmeta-", "X-Timestamp", "Content-Type")
		from := s.data
		if s.meta != nil {
			from = s.meta
		}
		for k, v := range keep(from, "X-Object-Meta-", "X-Object-Transient-Sysmeta-", "X-Timestamp", "Content-Type") {
			hdr[k] = v
		}
		for k, v := range hdr {
			w.Header()[k] = v
		}
		w.Header().Set("Etag", emptyETag)
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	}
}

// Over a Swift object server, each POST's system metadata joins what earlier POSTs changed
// and the PUT's, as on a Cairn node.
func TestPostOverSwiftMergesSysMeta(t *testing.T) {
	srv := httptest.NewServer(&swiftObjectServer{})
	defer srv.Close()
	d, _ := NewDialer(ClientConfig{Secret: testSecret})
	defer d.Close()
	c, _ := d.Dial(strings.TrimPrefix(srv.URL, "http://"))
	ctx := context.Background()
	name := meta.ObjectName{Account: "a", Container: "c", Object: "o"}
	put := meta.Object{Timestamp: meta.Now(), ContentType: "a/b", UserMeta: map[string]string{"u": "1"},
		SysMeta: map[string]string{"fixed": "f", "dlo-manifest": "c/p", "acl": "private"}}
	// A Swift object server does not say which listings took the write: its own updates are
	// taken as made, and the proxy sends no rows of its own to Swift's container servers.
	listings := []nodeclient.ContainerUpdate{{Node: "c1:6201", Device: "sdb1", Part: 2}, {Node: "c2:6201", Device: "sdb2", Part: 2}}
	listed := new(nodeclient.Listed)
	if _, err := c.PutObject(ctx, "sdb", 1, name, put, strings.NewReader(""), nodeclient.PutOptions{Containers: listings, Listed: listed}); err != nil {
		t.Fatal(err)
	}
	for _, u := range listings {
		if !listed.Has(u) {
			t.Errorf("a PUT to a Swift object server: listing %+v not taken as made", u)
		}
	}
	post := func(sys map[string]string, user map[string]string) meta.Object {
		t.Helper()
		o, err := c.PostObject(ctx, "sdb", 1, name, meta.Object{Timestamp: meta.Now(), ContentType: "a/b", UserMeta: user, SysMeta: sys}, nodeclient.PostOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	post(map[string]string{"dlo-manifest": "", "delete-at": "1900000000"}, map[string]string{"v": "2"})
	o := post(map[string]string{"acl": "public-read"}, nil)
	want := map[string]string{"fixed": "f", "dlo-manifest": "", "delete-at": "1900000000", "acl": "public-read"}
	if len(o.SysMeta) != len(want) {
		t.Errorf("sysmeta %q, want %q", o.SysMeta, want)
	}
	for k, v := range want {
		if got, ok := o.SysMeta[k]; !ok || got != v {
			t.Errorf("sysmeta %q = %q, want %q (all: %q)", k, got, v, o.SysMeta)
		}
	}
	if len(o.UserMeta) != 0 {
		t.Errorf("user metadata %q: a POST replaces it", o.UserMeta)
	}
}

// A PUT asks a Swift object server to list a manifest, or an object with a listing ETag, as
// Cairn's nodes list it (Swift's container update overrides, in the metadata footer); an
// ordinary object needs none.
func TestListingOverridesInFooter(t *testing.T) {
	var footer map[string]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mr := multipart.NewReader(r.Body, r.Header.Get(hdrMimeBoundary))
		footer = nil
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			if p.Header.Get("X-Document") == "object metadata" {
				json.NewDecoder(p).Decode(&footer)
			}
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	d, _ := NewDialer(ClientConfig{Secret: testSecret})
	defer d.Close()
	c, _ := d.Dial(strings.TrimPrefix(srv.URL, "http://"))
	ctx := context.Background()
	name := meta.ObjectName{Account: "a", Container: "c", Object: "o"}
	manifest := meta.Object{Timestamp: meta.Now(), Manifest: []meta.Segment{{Container: "c", Object: "s", Size: 7, ETag: "e"}},
		SysMeta: map[string]string{meta.SysManifestETag: "served", meta.SysListingETag: `m; slo_etag="served"`}}
	if _, err := c.PutObject(ctx, "sdb", 1, name, manifest, nil, nodeclient.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if footer[hdrListingOverride+"Size"] != "7" || footer[hdrListingOverride+"Etag"] != `m; slo_etag="served"` {
		t.Errorf("manifest's footer: %q", footer)
	}
	plain := meta.Object{Timestamp: meta.Now(), Size: 2}
	if _, err := c.PutObject(ctx, "sdb", 1, name, plain, strings.NewReader("ab"), nodeclient.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	for k := range footer {
		if strings.HasPrefix(k, hdrListingOverride) {
			t.Errorf("an ordinary object's footer has %s", k)
		}
	}
}

// An object without a content type crosses Swift's servers (which require one) as it is.
func TestUntypedObjects(t *testing.T) {
	for _, ct := range []string{"", untypedContentType, "text/plain"} {
		h := http.Header{}
		writeObjectMeta(h, &meta.Object{Timestamp: meta.Now(), ContentType: ct})
		if h.Get("Content-Type") == "" {
			t.Errorf("%q: sent without a content type", ct)
		}
		o, err := readObjectMeta(h)
		if err != nil || o.ContentType != ct {
			t.Errorf("%q: read back %q, %v", ct, o.ContentType, err)
		}
	}
}
