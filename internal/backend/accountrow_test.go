package backend

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// containerNode records the container and account calls the handler makes.
type containerNode struct {
	nodeclient.Client // unused methods: nil, they panic
	rows              []meta.ContainerRow
	puts              []nodeclient.ContainerOptions
	deletes           []meta.Timestamp
	deleteOpts        []nodeclient.ContainerOptions
}

func (n *containerNode) UpdateAccount(_ context.Context, device string, part uint32, account string, row meta.ContainerRow) error {
	if device != "d0" || part != 7 || account != "acct" {
		return ErrBadRequest
	}
	n.rows = append(n.rows, row)
	return nil
}

func (n *containerNode) PutContainer(_ context.Context, device string, part uint32, account string, c meta.Container, opts nodeclient.ContainerOptions) error {
	n.puts = append(n.puts, opts)
	return nil
}

func (n *containerNode) DeleteContainer(_ context.Context, device string, part uint32, account, container string, ts meta.Timestamp, opts nodeclient.ContainerOptions) error {
	n.deletes = append(n.deletes, ts)
	n.deleteOpts = append(n.deleteOpts, opts)
	return nil
}

var testSecret = []byte("secret")

func serve(t *testing.T, h *Handler, method, path string, header map[string]string) int {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	sign(r, testSecret, time.Now())
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// The account row in the form Swift's container server and container updater send it (no
// Cairn marker: the counts tell it from a container create).
func TestAccountRowInSwiftsForm(t *testing.T) {
	node := &containerNode{}
	h, err := NewHandler(HandlerConfig{Node: node, Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	swift := map[string]string{
		"X-Put-Timestamp": "1700000000.12345", "X-Delete-Timestamp": "0", "X-Object-Count": "3", "X-Bytes-Used": "30",
		"X-Backend-Storage-Policy-Index": "0", "X-Account-Override-Deleted": "yes", "X-Trans-Id": "tx1",
	}
	if code := serve(t, h, "PUT", "/d0/7/AUTH_acct/box", swift); code != http.StatusCreated {
		t.Fatalf("Swift's row: status %d", code)
	}
	swift["X-Delete-Timestamp"] = "1700000001.00000"
	swift["X-Object-Count"], swift["X-Bytes-Used"] = "0", "0"
	if code := serve(t, h, "PUT", "/d0/7/AUTH_acct/box", swift); code != http.StatusNoContent {
		t.Fatalf("Swift's delete row: status %d", code)
	}
	want := []meta.ContainerRow{
		{Name: "box", PutTimestamp: 1700000000_123450000, ObjectCount: 3, BytesUsed: 30},
		{Name: "box", PutTimestamp: 1700000000_123450000, DeleteTimestamp: 1700000001_000000000},
	}
	if len(node.rows) != 2 || node.rows[0] != want[0] || node.rows[1] != want[1] {
		t.Fatalf("rows %+v, want %+v", node.rows, want)
	}
	bad := map[string]string{"X-Backend-Cairn-Row": "container", "X-Put-Timestamp": "1700000000", "X-Object-Count": "many", "X-Bytes-Used": "1"}
	if code := serve(t, h, "PUT", "/d0/7/AUTH_acct/box", bad); code != http.StatusBadRequest {
		t.Fatalf("a row with a bad count: status %d", code)
	}
	// A create carries no counts: it is a create, with its account replica.
	create := map[string]string{"X-Timestamp": "1700000000.00000", "X-Account-Host": "10.0.0.1:6202", "X-Account-Device": "sdb", "X-Account-Partition": "12"}
	if code := serve(t, h, "PUT", "/d0/7/AUTH_acct/box", create); code != http.StatusCreated {
		t.Fatalf("create: status %d", code)
	}
	if len(node.puts) != 1 || node.puts[0].Account == nil || *node.puts[0].Account != (nodeclient.AccountUpdate{Node: "10.0.0.1:6202", Device: "sdb", Part: 12}) {
		t.Fatalf("create's account replica: %+v", node.puts)
	}
	if len(node.rows) != 2 {
		t.Fatalf("a create was taken for a row: %+v", node.rows)
	}
	// A delete needs its timestamp.
	if code := serve(t, h, "DELETE", "/d0/7/AUTH_acct/box", map[string]string{"X-Account-Host": "10.0.0.1:6202", "X-Account-Device": "sdb", "X-Account-Partition": "12"}); code != http.StatusBadRequest {
		t.Fatalf("delete without X-Timestamp: status %d", code)
	}
	create["X-Timestamp"] = "1700000002.00000"
	if code := serve(t, h, "DELETE", "/d0/7/AUTH_acct/box", create); code != http.StatusNoContent {
		t.Fatalf("delete: status %d", code)
	}
	if len(node.deletes) != 1 || node.deletes[0] != 1700000002_000000000 || node.deleteOpts[0].Account == nil || node.deleteOpts[0].Account.Part != 12 {
		t.Fatalf("delete: %v %+v", node.deletes, node.deleteOpts)
	}
}

// What the client sends for an account row: Swift's headers, and Cairn's marker.
func TestAccountRowOnTheWire(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		w.WriteHeader(http.StatusNoContent)
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
	row := meta.ContainerRow{Name: "a b", PutTimestamp: 1700000000_123456789, DeleteTimestamp: 1700000005_000000000, ObjectCount: 0, BytesUsed: 0}
	if err := c.UpdateAccount(context.Background(), "sdb", 12, "x", row); err != nil {
		t.Fatal(err)
	}
	if got.Method != http.MethodPut || got.URL.EscapedPath() != "/sdb/12/AUTH_x/a%20b" {
		t.Fatalf("%s %s", got.Method, got.URL.EscapedPath())
	}
	for k, v := range map[string]string{
		"X-Put-Timestamp": "1700000000.12345_0000000000001a85", "X-Delete-Timestamp": "1700000005.00000",
		"X-Object-Count": "0", "X-Bytes-Used": "0", "X-Backend-Storage-Policy-Index": "0",
		"X-Account-Override-Deleted": "yes", "X-Backend-Cairn-Row": "container",
	} {
		if got.Header.Get(k) != v {
			t.Errorf("%s: %q, want %q", k, got.Header.Get(k), v)
		}
	}
	if got.Header.Get("X-Backend-Cairn-Auth") == "" {
		t.Error("unsigned")
	}
}
