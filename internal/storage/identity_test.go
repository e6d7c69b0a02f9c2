package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/engine"
	"github.com/cairn-store/cairn/internal/index"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/vfs"
)

// fill writes objects large enough to be data files, and returns the node closed.
func fill(t *testing.T, devs ...DeviceConfig) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	n, err := Open(Config{Devices: devs})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	objects := map[string][]byte{}
	for _, d := range devs {
		if err := n.PutContainer(ctx, d.Name, 0, "a", meta.Container{Name: "c"}, nodeclient.ContainerOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, o := range []string{"x", "y", "z"} {
			data := bytes.Repeat([]byte(d.Name+o), 100<<10)
			name := meta.ObjectName{Account: "a", Container: "c", Object: o}
			if _, err := n.PutObject(ctx, d.Name, 0, name, meta.Object{Timestamp: meta.Now(), Size: int64(len(data))}, bytes.NewReader(data), nodeclient.PutOptions{Containers: []nodeclient.ContainerUpdate{{Device: d.Name}}}); err != nil {
				t.Fatal(err)
			}
			objects[d.Name+"/"+o] = data
		}
	}
	return objects
}

func countDataFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(filepath.Join(dir, "objects"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".data") {
			n++
		}
		return nil
	})
	return n
}

func checkObjects(t *testing.T, n *Node, objects map[string][]byte) {
	t.Helper()
	for k, want := range objects {
		dev, o, _ := strings.Cut(k, "/")
		r, err := n.GetObject(context.Background(), dev, 0, meta.ObjectName{Account: "a", Container: "c", Object: o}, nil)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %d bytes, %v", k, len(got), err)
		}
	}
}

// The defect this guards against: a device whose index went missing was opened over a new,
// empty index, and startup removed every data file as a leftover of interrupted writes.
func TestMissingIndexRefusesTheDeviceAndKeepsItsData(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d0")
	dev := DeviceConfig{Name: "d0", Dir: dir}
	objects := fill(t, dev)
	files := countDataFiles(t, dir)
	if files != 3 {
		t.Fatalf("%d data files, want 3", files)
	}
	lsm, away := filepath.Join(dir, "lsm"), filepath.Join(t.TempDir(), "lsm-away")
	if err := os.Rename(lsm, away); err != nil {
		t.Fatal(err)
	}
	for range 2 { // refused every time, not only the first
		_, err := Open(Config{Devices: []DeviceConfig{dev}})
		if !errors.Is(err, ErrDeviceIdentity) || !strings.Contains(err.Error(), "index is missing") {
			t.Fatalf("open without the index: %v, want ErrDeviceIdentity naming the missing index", err)
		}
		if got := countDataFiles(t, dir); got != files {
			t.Fatalf("%d data files after the refused open, want %d", got, files)
		}
	}
	os.RemoveAll(lsm)
	if err := os.Rename(away, lsm); err != nil {
		t.Fatal(err)
	}
	n, err := Open(Config{Devices: []DeviceConfig{dev}})
	if err != nil {
		t.Fatalf("open with the index back: %v", err)
	}
	defer n.Close()
	checkObjects(t, n, objects)
}

// An index on its own device: not mounted (missing), or the index of another device mounted in
// its place, refuses the device; the node keeps serving its other devices.
func TestSeparateIndexMismatchRefusesOnlyThatDevice(t *testing.T) {
	root := t.TempDir()
	d0 := DeviceConfig{Name: "d0", Dir: filepath.Join(root, "d0"), IndexDir: filepath.Join(root, "fast", "d0-lsm")}
	d1 := DeviceConfig{Name: "d1", Dir: filepath.Join(root, "d1"), IndexDir: filepath.Join(root, "fast", "d1-lsm")}
	objects := fill(t, d0, d1)
	if _, err := os.Stat(filepath.Join(d0.Dir, "lsm")); !os.IsNotExist(err) {
		t.Fatalf("an LSM in the data directory although IndexDir is set: %v", err)
	}

	// d0's index swapped for d1's: both must be refused.
	swapped := d0
	swapped.IndexDir = d1.IndexDir
	if _, err := Open(Config{Devices: []DeviceConfig{swapped}}); !errors.Is(err, ErrDeviceIdentity) || !strings.Contains(err.Error(), "belongs to device") {
		t.Fatalf("open with another device's index: %v", err)
	}

	// d0's index device not mounted: d0 is refused, d1 serves.
	if err := os.Rename(d0.IndexDir, d0.IndexDir+".unmounted"); err != nil {
		t.Fatal(err)
	}
	n, err := Open(Config{Devices: []DeviceConfig{d0, d1}})
	if err != nil {
		t.Fatalf("a node with one good device must open: %v", err)
	}
	defer n.Close()
	if err := n.Failed()["d0"]; !errors.Is(err, ErrDeviceIdentity) {
		t.Fatalf("d0 failure %v", err)
	}
	if _, err := n.HeadObject(context.Background(), "d0", 0, meta.ObjectName{Account: "a", Container: "c", Object: "x"}, nodeclient.HeadOptions{}); !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("request to the refused device: %v, want ErrUnavailable", err)
	}
	for k := range objects {
		if strings.HasPrefix(k, "d0/") {
			delete(objects, k)
		}
	}
	checkObjects(t, n, objects)
	if got := countDataFiles(t, d0.Dir); got != 3 {
		t.Fatalf("d0 has %d data files, want 3", got)
	}
}

// A data directory whose ID file is gone while its index holds data (the data disk not
// mounted under a separate index) is refused; a device made before IDs existed is adopted.
func TestDeviceIDFileMissingAndLegacyDevices(t *testing.T) {
	root := t.TempDir()
	dev := DeviceConfig{Name: "d0", Dir: filepath.Join(root, "d0"), IndexDir: filepath.Join(root, "lsm")}
	objects := fill(t, dev)
	if err := os.Rename(dev.Dir, dev.Dir+".unmounted"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Config{Devices: []DeviceConfig{dev}}); !errors.Is(err, ErrDeviceIdentity) || !strings.Contains(err.Error(), "mounted") {
		t.Fatalf("open of an unmounted data directory: %v", err)
	}
	os.RemoveAll(dev.Dir)
	if err := os.Rename(dev.Dir+".unmounted", dev.Dir); err != nil {
		t.Fatal(err)
	}

	// Legacy: strip both IDs, as a device written before they existed.
	if err := os.Remove(filepath.Join(dev.Dir, deviceIDFile)); err != nil {
		t.Fatal(err)
	}
	opts := &pebble.Options{Merger: index.Merger}
	engine.TunePebble(opts)
	db, err := pebble.Open(dev.IndexDir, opts)
	if err == nil {
		err = errors.Join(db.Delete(deviceIDKey, pebble.Sync), db.Close())
	}
	if err != nil {
		t.Fatal(err)
	}
	n, err := Open(Config{Devices: []DeviceConfig{dev}})
	if err != nil {
		t.Fatalf("open of a device without IDs: %v", err)
	}
	checkObjects(t, n, objects)
	n.Close()
	if id, err := readIDFile(vfs.Default, dev.Dir); err != nil || id == "" {
		t.Fatalf("no ID written to the adopted device: %q, %v", id, err)
	}
}
