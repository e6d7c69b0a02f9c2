package backend

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// The client names accounts and reserved objects as Swift does on the wire.
func TestSwiftNamesOnTheWire(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.RequestURI())
		mu.Unlock()
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			// Swift's listing of a reserved container: every name in the reserved namespace.
			w.Write([]byte(`[{"name":"\u0000k\u0000up","hash":"h","bytes":1,"content_type":"a/b","last_modified":"2024-01-02T03:04:05.000000"},{"subdir":"\u0000k/"}]`))
		case http.MethodPut:
			w.WriteHeader(http.StatusCreated)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer srv.Close()
	d, err := NewDialer(ClientConfig{Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c, _ := d.Dial(strings.TrimPrefix(srv.URL, "http://"))
	ctx := context.Background()
	const mpu = "\x00mpu\x00b"
	if _, err := c.PutObject(ctx, "sdb", 1, meta.ObjectName{Account: "test", Container: "b", Object: "k"}, meta.Object{Timestamp: meta.Now(), Size: 0}, nil, nodeclient.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, "sdb", 1, meta.ObjectName{Account: "test", Container: mpu, Object: "k\x00up"}, meta.Object{Timestamp: meta.Now(), Size: 0}, nil, nodeclient.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.UpdateListing(ctx, "sdb", 1, "\x00names", mpu, meta.ListEntry{Name: "k\x00up", Timestamp: meta.Now()}, true); err != nil {
		t.Fatal(err)
	}
	if err := c.PutAccount(ctx, "sdb", 1, "test", meta.Now()); err != nil {
		t.Fatal(err)
	}
	l, err := c.ListObjects(ctx, "sdb", 1, "test", mpu, meta.ListOptions{Prefix: "k", Marker: "j", Delimiter: "/"})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Objects) != 1 || l.Objects[0].Name != "k\x00up" || len(l.CommonPrefixes) != 1 || l.CommonPrefixes[0] != "k/" {
		t.Errorf("listing read back: %+v", l)
	}
	want := []string{
		"PUT /sdb/1/AUTH_test/b/k",
		"PUT /sdb/1/AUTH_test/%00mpu%00b/%00k%00up",
		"DELETE /sdb/1/%00names/%00mpu%00b/%00k%00up",
		"PUT /sdb/1/AUTH_test",
		"GET /sdb/1/AUTH_test/%00mpu%00b?delimiter=%2F&format=json&marker=%00j&prefix=%00k",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The handler takes only Swift's names: an account of no reseller, or an object of a reserved
// container outside the reserved namespace, is no request of the protocol.
func TestHandlerRefusesNonSwiftNames(t *testing.T) {
	h, err := NewHandler(HandlerConfig{Node: &containerNode{}, Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	row := map[string]string{"X-Put-Timestamp": "1700000000.00000", "X-Delete-Timestamp": "0", "X-Object-Count": "0", "X-Bytes-Used": "0"}
	for _, path := range []string{"/d0/7/acct/box", "/d0/7/AUTH_/box", "/d0/7/OTHER_acct/box"} {
		if code := serve(t, h, "PUT", path, row); code != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", path, code)
		}
	}
	if code := serve(t, h, "PUT", "/d0/7/AUTH_acct/box", row); code != http.StatusCreated {
		t.Errorf("Swift's name: status %d", code)
	}
	for _, path := range []string{"/d0/7/AUTH_acct/%00mpu%00box/k%00up", "/d0/7/AUTH_acct/%00mpu%00box/%00"} {
		if code := serve(t, h, "HEAD", path, nil); code != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", path, code)
		}
	}
}

// A Swift object server ranges a manifest's stored segment list as it ranges any body: the
// client asks again for all of it, whether the range fell inside the list (206) or past it
// (416).
func TestManifestRangedBySwift(t *testing.T) {
	segs := []meta.Segment{{Container: "c", Object: "s1", Size: 3, ETag: "e1"}, {Container: "c", Object: "s2", Size: 4, ETag: "e2"}}
	doc, err := encodeManifest(segs)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(hdrTimestamp, "1700000000.00000")
		w.Header().Set(hdrManifest, "2 7")
		rng, err := parseRange(r.Header.Get("Range"))
		switch {
		case r.Header.Get("Range") == "":
			w.Write(doc)
		case err == nil && rng.Start < int64(len(doc)) && rng.Suffix == 0:
			w.Header().Set("Content-Range", "bytes 0-0/"+strconv.Itoa(len(doc)))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(doc[:1])
		default:
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
		}
	}))
	defer srv.Close()
	d, _ := NewDialer(ClientConfig{Secret: testSecret})
	defer d.Close()
	c, _ := d.Dial(strings.TrimPrefix(srv.URL, "http://"))
	for _, rng := range []*meta.Range{{Start: 0, End: 0}, {Start: 5000, End: -1}} {
		r, err := c.GetObject(context.Background(), "sdb", 1, meta.ObjectName{Account: "a", Container: "c", Object: "m"}, rng)
		if err != nil {
			t.Fatalf("range %+v: %v", rng, err)
		}
		r.Close()
		if len(r.Object.Manifest) != 2 || r.Object.Manifest[1].Object != "s2" {
			t.Errorf("range %+v: manifest %+v", rng, r.Object.Manifest)
		}
	}
}
