package storage_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/nodeclient/nodeclienttest"
	"github.com/cairn-store/cairn/internal/storage"
)

// The storage node called in-process passes the node contract's conformance test (as the HTTP
// client of the node protocol does, in internal/backend).
func TestConformance(t *testing.T) {
	nodeclienttest.Run(t, func(t *testing.T) nodeclienttest.Target {
		dir := t.TempDir()
		n, err := storage.Open(storage.Config{Address: "local", Devices: []storage.DeviceConfig{
			{Name: "d0", Dir: filepath.Join(dir, "d0")}, {Name: "d1", Dir: filepath.Join(dir, "d1")}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return nodeclienttest.Target{Client: n, Device: "d0",
			Update:  &nodeclient.ContainerUpdate{Node: "local", Device: "d0", Part: 3},
			Account: &nodeclient.AccountUpdate{Node: "local", Device: "d0", Part: 5},
			Other:   &nodeclient.AccountUpdate{Node: "local", Device: "d1", Part: 5},
			Flush:   func() { n.FlushUpdates(context.Background()) },
		}
	})
}
