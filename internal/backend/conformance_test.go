package backend_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/backend"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/nodeclient/nodeclienttest"
	"github.com/cairn-store/cairn/internal/storage"
)

var secret = []byte("cluster secret for tests")

// startNode serves a storage node with one device over the node protocol and returns its
// address.
func startNode(t *testing.T) (addr string, node *storage.Node) {
	t.Helper()
	n, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: "d0", Dir: t.TempDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := backend.NewHandler(backend.HandlerConfig{Node: n, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); n.Close() })
	return strings.TrimPrefix(srv.URL, "http://"), n
}

// The HTTP client of the node protocol, through the handler, passes the same conformance test
// as the storage node called in-process.
func TestConformance(t *testing.T) {
	nodeclienttest.Run(t, func(t *testing.T) nodeclienttest.Target {
		addr, _ := startNode(t)
		d, err := backend.NewDialer(backend.ClientConfig{Secret: secret})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Close)
		c, err := d.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		return nodeclienttest.Target{Client: c, Device: "d0", Update: &nodeclient.ContainerUpdate{Node: addr, Device: "d0", Part: 3}}
	})
}
