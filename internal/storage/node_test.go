package storage

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

func openNode(t *testing.T) (*Node, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "d0")
	n, err := Open(Config{Devices: []DeviceConfig{{Name: "d0", Dir: dir}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n, dir
}

// A version found corrupt is kept, flagged: it stays listed (it exists, and replication or a
// rewrite must repair it), reads answer ErrCorrupt, and a new PUT of the name counts once.
func TestCorruptObjectStaysListedAndFlagged(t *testing.T) {
	ctx := context.Background()
	n, dir := openNode(t)
	if err := n.PutContainer(ctx, "d0", 0, "a", meta.Container{Name: "c"}, nodeclient.ContainerOptions{Account: &nodeclient.AccountUpdate{Device: "d0"}}); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 200<<10) // a data file, not inline
	rand.Read(data)
	name := meta.ObjectName{Account: "a", Container: "c", Object: "victim"}
	if _, err := n.PutObject(ctx, "d0", 0, name, meta.Object{Timestamp: meta.Now(), Size: int64(len(data))}, bytes.NewReader(data), nodeclient.PutOptions{Containers: []nodeclient.ContainerUpdate{{Device: "d0"}}}); err != nil {
		t.Fatal(err)
	}
	// Flip a byte of the data file.
	var file string
	filepath.WalkDir(filepath.Join(dir, "objects"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".data" {
			file = p
		}
		return nil
	})
	if file == "" {
		t.Fatal("no data file written")
	}
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{0xff ^ data[1000]}, 1000)
	f.Close()

	r, err := n.GetObject(ctx, "d0", 0, name, nil)
	if err == nil {
		_, err = io.ReadAll(r)
		r.Close()
	}
	if !errors.Is(err, meta.ErrCorrupt) {
		t.Fatalf("read of a corrupted object: %v, want ErrCorrupt", err)
	}
	if _, err := n.HeadObject(ctx, "d0", 0, name, nodeclient.HeadOptions{}); !errors.Is(err, meta.ErrCorrupt) {
		t.Fatalf("HEAD of a corrupted object: %v, want ErrCorrupt", err)
	}
	l, err := n.ListObjects(ctx, "d0", 0, "a", "c", meta.ListOptions{})
	if err != nil || len(l.Objects) != 1 || l.Objects[0].Name != "victim" {
		t.Fatalf("listing after the object was found corrupt: %+v, %v", l.Objects, err)
	}
	if got := gatherValue(t, n, "cairn_device_corrupt_objects"); got != 1 {
		t.Fatalf("cairn_device_corrupt_objects = %v, want 1", got)
	}
	// Writing the name again counts it once.
	if _, err := n.PutObject(ctx, "d0", 0, name, meta.Object{Timestamp: meta.Now(), Size: 3}, bytes.NewReader([]byte("new")), nodeclient.PutOptions{Containers: []nodeclient.ContainerUpdate{{Device: "d0"}}}); err != nil {
		t.Fatal(err)
	}
	c, err := n.HeadContainer(ctx, "d0", 0, "a", "c")
	if err != nil || c.ObjectCount != 1 || c.BytesUsed != 3 {
		t.Fatalf("usage after rewrite: %+v, %v", c, err)
	}
	if got := gatherValue(t, n, "cairn_device_corrupt_objects"); got != 0 {
		t.Fatalf("cairn_device_corrupt_objects = %v after the rewrite, want 0", got)
	}
}

// gatherValue returns the value of a metric of the node's collector for device d0.
func gatherValue(t *testing.T, n *Node, metric string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(n.Collector())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("metric %s not found", metric)
	return 0
}

func TestCollectorReportsEveryDevice(t *testing.T) {
	n, _ := openNode(t)
	reg := prometheus.NewRegistry()
	reg.MustRegister(n.Collector())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == "d0" {
				found[f.GetName()] = true
			}
		}
	}
	for _, want := range []string{"cairn_lsm_l0_tables", "cairn_lsm_compaction_debt_bytes", "cairn_lsm_block_cache_hits_total"} {
		if !found[want] {
			t.Errorf("%s for device d0 missing from %v", want, found)
		}
	}
}

// A device added while the node runs serves at once; devices it serves already are left alone.
func TestAddDevicesWhileRunning(t *testing.T) {
	d0 := DeviceConfig{Name: "d0", Dir: filepath.Join(t.TempDir(), "d0")}
	n, err := Open(Config{Devices: []DeviceConfig{d0}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	name := meta.ObjectName{Account: "a", Container: "c", Object: "o"}
	put := func(dev string) error {
		_, err := n.PutObject(context.Background(), dev, 0, name, meta.Object{Timestamp: meta.Now(), Size: 1}, strings.NewReader("x"), nodeclient.PutOptions{})
		return err
	}
	if err := put("d1"); !errors.Is(err, ErrNoDevice) {
		t.Fatalf("put to a device not yet added: %v", err)
	}
	d1 := DeviceConfig{Name: "d1", Dir: filepath.Join(t.TempDir(), "d1")}
	if err := n.AddDevices([]DeviceConfig{d0, d1}); err != nil {
		t.Fatal(err)
	}
	if err := put("d1"); err != nil {
		t.Fatalf("put to the added device: %v", err)
	}
	if got := n.Devices(); len(got) != 2 {
		t.Fatalf("devices %v", got)
	}
	if err := n.AddDevices([]DeviceConfig{d0, d1}); err != nil {
		t.Fatalf("adding them again: %v", err)
	}
}
