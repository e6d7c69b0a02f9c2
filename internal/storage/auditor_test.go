package storage

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// auditNode is a node alone with one container "a/c" holding small (inline) and large (data
// file) objects.
func auditNode(t *testing.T, objects map[string][]byte) (*Node, string) {
	t.Helper()
	ctx := context.Background()
	n, dir := openNode(t)
	if err := n.PutContainer(ctx, "d0", 0, "a", meta.Container{Name: "c"}, nodeclient.ContainerOptions{Account: &nodeclient.AccountUpdate{Device: "d0"}}); err != nil {
		t.Fatal(err)
	}
	for o, data := range objects {
		name := meta.ObjectName{Account: "a", Container: "c", Object: o}
		if _, err := n.PutObject(ctx, "d0", 0, name, meta.Object{Timestamp: meta.Now(), Size: int64(len(data)), ContentType: "t"}, bytes.NewReader(data),
			nodeclient.PutOptions{Containers: []nodeclient.ContainerUpdate{{Device: "d0"}}}); err != nil {
			t.Fatal(err)
		}
	}
	return n, dir
}

// lsmKey is a key of the device's LSM: prefix, then length-prefixed names but the last (the
// layout the engine and the index share).
func lsmKey(prefix byte, names ...string) []byte {
	k := []byte{prefix}
	for i, s := range names {
		if i < len(names)-1 {
			k = binary.AppendUvarint(k, uint64(len(s)))
		}
		k = append(k, s...)
	}
	return k
}

func flipValue(t *testing.T, db *pebble.DB, key []byte, at int) {
	t.Helper()
	v, closer, err := db.Get(key)
	if err != nil {
		t.Fatalf("%q: %v", key, err)
	}
	bad := bytes.Clone(v)
	closer.Close()
	bad[at%len(bad)] ^= 0x20
	if err := db.Set(key, bad, pebble.Sync); err != nil {
		t.Fatal(err)
	}
}

func randomData(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// metric returns a metric's value by its labels (device, and kind when given).
func metric(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var got []string
			for _, l := range m.GetLabel() {
				got = append(got, l.GetValue())
			}
			if slices.Equal(got, labels) {
				return value(m)
			}
		}
	}
	t.Fatalf("metric %s%q not found", name, labels)
	return 0
}

func value(m *dto.Metric) float64 {
	if m.GetGauge() != nil {
		return m.GetGauge().GetValue()
	}
	return m.GetCounter().GetValue()
}

// Through a real node: a flipped byte in a data file, in an inline record and in a listing row
// are found by one pass. The objects answer ErrCorrupt from then on; the listing row, on a node
// alone, is rebuilt from the object's record; the metrics say what the pass did.
func TestAuditorFindsDamageOnANode(t *testing.T) {
	ctx := context.Background()
	objects := map[string][]byte{"big-bad": randomData(300 << 10), "big-good": randomData(200 << 10),
		"small-bad": []byte("a small object"), "small-good": []byte("fine"), "listed-bad": []byte("row")}
	n, dir := auditNode(t, objects)
	d, _ := n.device("d0")
	var file string
	filepath.WalkDir(filepath.Join(dir, "objects"), func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && filepath.Ext(p) == ".data" && file == "" {
			file = p
		}
		return nil
	})
	// Which data file belongs to which object is the engine's business: find out by reading.
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 16)
	f.ReadAt(head, 100<<10)
	victim := "big-good"
	if bytes.Equal(head, objects["big-bad"][100<<10:100<<10+16]) {
		victim = "big-bad"
	}
	head[0] ^= 1
	f.WriteAt(head[:1], 100<<10)
	f.Close()
	flipValue(t, d.db, lsmKey('o', "a", "c", "small-bad"), 20)
	flipValue(t, d.db, lsmKey('c', "a", "c", "listed-bad"), 2)
	if l, err := n.ListObjects(ctx, "d0", 0, "a", "c", meta.ListOptions{}); err != nil || len(l.Objects) != 4 {
		t.Fatalf("listing before the pass: %+v, %v; want the bad row skipped", l.Objects, err)
	}

	reg := prometheus.NewRegistry()
	a, err := n.NewAuditor(AuditorConfig{BytesPerSecond: -1, RecordsPerSecond: -1, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	r := a.Pass(ctx)["d0"]
	if r.Err != nil || r.Objects.Corrupt != 2 || r.Objects.Records != 5 || r.Listings.Corrupt != 1 || r.Listings.Rebuilt != 1 {
		t.Fatalf("pass: %+v", r)
	}
	for _, o := range []string{victim, "small-bad"} {
		rd, err := n.GetObject(ctx, "d0", 0, meta.ObjectName{Account: "a", Container: "c", Object: o}, nil)
		if err == nil {
			_, err = io.ReadAll(rd)
			rd.Close()
		}
		if !errors.Is(err, meta.ErrCorrupt) {
			t.Fatalf("GET %s after the pass: %v, want ErrCorrupt", o, err)
		}
	}
	l, err := n.ListObjects(ctx, "d0", 0, "a", "c", meta.ListOptions{})
	if err != nil || len(l.Objects) != 5 || l.Objects[2].Name != "listed-bad" || l.Objects[2].Size != 3 {
		t.Fatalf("listing after the pass: %+v, %v; want every object, the bad row rebuilt", l.Objects, err)
	}
	var total int64
	for _, data := range objects {
		total += int64(len(data))
	}
	if c, err := n.HeadContainer(ctx, "d0", 0, "a", "c"); err != nil || c.ObjectCount != 5 || c.BytesUsed != total {
		t.Fatalf("usage %+v, %v; want 5 objects, %d bytes", c, err, total)
	}
	q, _ := os.ReadDir(filepath.Join(dir, "quarantine"))
	var kept []string
	for _, e := range q {
		kept = append(kept, filepath.Ext(e.Name()))
	}
	slices.Sort(kept)
	if !slices.Equal(kept, []string{".data", ".listing", ".record"}) {
		t.Fatalf("quarantine holds %q", kept)
	}
	for name, want := range map[string]float64{"cairn_auditor_passes_total": 1, "cairn_auditor_pass_progress": 1,
		// 5 records, 5 listing rows, an account row, and the 5 rows of the container's recount.
		"cairn_auditor_records_total": 5 + 5 + 1 + 5} {
		if got := metric(t, reg, name, "d0"); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := metric(t, reg, "cairn_auditor_failures_total", "d0", "object"); got != 2 {
		t.Errorf("object failures = %v, want 2", got)
	}
	if got := metric(t, reg, "cairn_auditor_failures_total", "d0", "listing"); got != 1 {
		t.Errorf("listing failures = %v, want 1", got)
	}
	if got := metric(t, reg, "cairn_auditor_last_pass_completion_timestamp_seconds", "d0"); got < float64(time.Now().Add(-time.Hour).Unix()) {
		t.Errorf("last pass completed at %v", got)
	}
	if got := metric(t, reg, "cairn_auditor_bytes_total", "d0"); got < float64(len(objects[victim])) {
		t.Errorf("bytes audited %v", got)
	}
	if got := gatherValue(t, n, "cairn_device_listing_rows_skipped_total"); got != 1 {
		t.Errorf("cairn_device_listing_rows_skipped_total = %v, want 1", got)
	}
	// The next pass finds nothing new.
	if r := a.Pass(ctx)["d0"]; r.Err != nil || r.Objects.Corrupt != 0 || r.Objects.Flagged != 2 || r.Listings.Corrupt != 0 {
		t.Fatalf("second pass: %+v", r)
	}
	if got := metric(t, reg, "cairn_auditor_failures_total", "d0", "object"); got != 2 {
		t.Errorf("object failures after the second pass = %v, want 2", got)
	}
}

// The daemon passes over the devices until stopped, and Stop ends a running pass.
func TestAuditorRuns(t *testing.T) {
	n, _ := auditNode(t, map[string][]byte{"x": []byte("x")})
	reg := prometheus.NewRegistry()
	a, err := n.NewAuditor(AuditorConfig{Interval: time.Millisecond, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	deadline := time.Now().Add(time.Minute)
	for metricOrZero(reg, "cairn_auditor_passes_total") < 2 {
		if time.Now().After(deadline) {
			a.Stop()
			t.Fatal("the auditor did not complete two passes")
		}
		time.Sleep(time.Millisecond)
	}
	a.Stop()
	a.Stop()
}

func metricOrZero(reg *prometheus.Registry, name string) float64 {
	families, _ := reg.Gather()
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) > 0 {
			return value(f.GetMetric()[0])
		}
	}
	return 0
}

// The pace reads more than the byte limiter's burst in steps, rather than failing.
func TestAuditorPaceSplitsLargeReads(t *testing.T) {
	n, _ := openNode(t)
	a, err := n.NewAuditor(AuditorConfig{BytesPerSecond: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.pace(context.Background(), 1, 3*int64(a.bytes.Burst())); err != nil {
		t.Fatalf("pace of three bursts: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.pace(ctx, 0, 3*int64(a.bytes.Burst())); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("pace with a canceled context: %v", err)
	}
	if _, err := n.NewAuditor(AuditorConfig{Interval: -1}); err == nil {
		t.Fatal("a negative interval was accepted")
	}
}
