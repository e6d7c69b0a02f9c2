package ring

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pyRing is what Swift's own Python ring code makes of a ring file (testdata/swiftring.py).
type pyRing struct {
	PartPower    uint    `json:"part_power"`
	ReplicaCount float64 `json:"replica_count"`
	Version      *int64  `json:"version"`
	Devs         []*struct {
		ID              int     `json:"id"`
		Region          int     `json:"region"`
		Zone            int     `json:"zone"`
		IP              string  `json:"ip"`
		Port            int     `json:"port"`
		Device          string  `json:"device"`
		Weight          float64 `json:"weight"`
		ReplicationIP   string  `json:"replication_ip"`
		ReplicationPort int     `json:"replication_port"`
		Meta            string  `json:"meta"`
	} `json:"devs"`
	Primaries [][]int           `json:"primaries"`
	Handoffs  [][]int           `json:"handoffs"`
	Names     map[string]uint32 `json:"names"`
}

const swiftPython = "/usr/bin/python3"

// swiftRing runs Swift's ring code on a file, or skips the test when it is not installed.
func swiftRing(t *testing.T, path, prefix, suffix string, handoffs int, names ...string) *pyRing {
	t.Helper()
	if _, err := os.Stat(swiftPython); err != nil {
		t.Skipf("no %s to run Swift's ring code", swiftPython)
	}
	args := append([]string{"testdata/swiftring.py", path, prefix, suffix, strconv.Itoa(handoffs)}, names...)
	cmd := exec.Command(swiftPython, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == 3 {
		t.Skipf("Swift's Python ring code is not installed (Debian's python3-swift): %s", stderr.String())
	}
	if err != nil {
		t.Fatalf("swiftring.py %s: %v\n%s", path, err, stderr.String())
	}
	var pr pyRing
	if err := json.Unmarshal(out, &pr); err != nil {
		t.Fatal(err)
	}
	return &pr
}

var testNames = []string{"AUTH_test", "AUTH_test/c", "AUTH_test/c/o", "a/b/c/d", "AUTH_x/photos/2026/11/cat.jpg", "AUTH_é/ü"}

// compareWithSwift checks that Cairn reads a ring file as Swift does: devices, primaries of
// every partition, the first handoffs, and the partitions of some names.
func compareWithSwift(t *testing.T, path string, r *Ring, handoffs bool) {
	t.Helper()
	// Swift's code will not hash without a prefix or suffix (it would read /etc/swift's): names
	// are compared with a prefix when the ring has none.
	hasher := &Ring{PartPower: r.PartPower, HashPrefix: r.HashPrefix, HashSuffix: r.HashSuffix}
	if hasher.HashPrefix == "" && hasher.HashSuffix == "" {
		hasher.HashPrefix = "cairn-test"
	}
	py := swiftRing(t, path, hasher.HashPrefix, hasher.HashSuffix, 6, testNames...)
	if py.PartPower != r.PartPower || py.ReplicaCount != r.ReplicaCount() {
		t.Fatalf("%s: Swift sees part power %d and %v replicas, Cairn %d and %v", path, py.PartPower, py.ReplicaCount, r.PartPower, r.ReplicaCount())
	}
	if py.Version == nil || *py.Version != r.Version {
		t.Errorf("%s: Swift's version %v, Cairn's %d", path, py.Version, r.Version)
	}
	byID := map[int]Device{}
	for _, d := range r.Devices {
		byID[d.ID] = d
	}
	for _, pd := range py.Devs {
		if pd == nil {
			continue
		}
		d, ok := byID[pd.ID]
		node := strings.TrimSuffix(strings.TrimPrefix(d.Node, "["), "]:"+strconv.Itoa(pd.Port))
		if !ok || node != pd.IP && d.Node != pd.IP+":"+strconv.Itoa(pd.Port) || d.Region != pd.Region || d.Zone != pd.Zone || d.Name != pd.Device || d.Weight != pd.Weight || d.Meta != pd.Meta {
			t.Errorf("%s: device %d: Swift %+v, Cairn %+v", path, pd.ID, *pd, d)
		}
		delete(byID, pd.ID)
	}
	if len(byID) != 0 {
		t.Errorf("%s: devices Swift does not have: %v", path, byID)
	}
	for p := range r.Partitions() {
		var ids []int
		for _, d := range r.Nodes(uint32(p)) {
			if !slices.Contains(ids, d.ID) { // Swift lists a device once
				ids = append(ids, d.ID)
			}
		}
		if !slices.Equal(ids, py.Primaries[p]) {
			t.Fatalf("%s: partition %d: Swift's primaries %v, Cairn's %v", path, p, py.Primaries[p], ids)
		}
		if !handoffs {
			continue
		}
		var hs []int
		for d := range r.Handoffs(uint32(p)) {
			if len(hs) == 6 {
				break
			}
			hs = append(hs, d.ID)
		}
		if !slices.Equal(hs, py.Handoffs[p]) {
			t.Fatalf("%s: partition %d: Swift's handoffs %v, Cairn's %v", path, p, py.Handoffs[p], hs)
		}
	}
	for _, name := range testNames {
		a, c, o := splitName(name)
		if got := hasher.Partition(a, c, o); got != py.Names[name] {
			t.Errorf("%s: partition of %q: Swift %d, Cairn %d", path, name, py.Names[name], got)
		}
	}
}

func splitName(name string) (a, c, o string) {
	parts := strings.SplitN(name, "/", 3)
	parts = append(parts, "", "")
	return parts[0], parts[1], parts[2]
}

func TestLoadSwiftFixtures(t *testing.T) {
	r, err := Load("testdata/swift-mixed.ring.gz")
	if err != nil {
		t.Fatal(err)
	}
	// What swift-ring-builder said of it (testdata/swift-fixtures.sh): device 1 removed.
	want := map[int]int{0: 32, 2: 62, 3: 18, 4: 48, 5: 32}
	st := r.Stats()
	for _, d := range st.Devices {
		if d.Parts != want[d.ID] {
			t.Errorf("device %d has %d partitions, swift-ring-builder said %d", d.ID, d.Parts, want[d.ID])
		}
	}
	if len(r.Devices) != 5 || r.Replicas() != 3 || r.PartPower != 6 {
		t.Fatalf("mixed: %d devices, %d replicas, power %d", len(r.Devices), r.Replicas(), r.PartPower)
	}
	d0, d4 := r.Devices[0], r.Devices[3]
	if d0.ReplicationNode != "10.1.1.1:6300" || d0.Meta != "rack a" || d0.Node != "10.0.1.1:6200" || d4.Node != "[fd00::1]:6200" || d4.Region != 2 {
		t.Errorf("devices: %+v %+v", d0, d4)
	}
	if r.Devices[1].ReplicationNode != "" {
		t.Errorf("a replication address equal to the node's is kept: %+v", r.Devices[1])
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	compareWithSwift(t, "testdata/swift-mixed.ring.gz", r, true)

	f, err := Load("testdata/swift-frac.ring.gz")
	if err != nil {
		t.Fatal(err)
	}
	if f.ReplicaCount() != 2.5 || f.Replicas() != 3 || len(f.Assignments[2]) != 16 {
		t.Fatalf("fractional ring: %v replicas, rows %d, last row %d", f.ReplicaCount(), f.Replicas(), len(f.Assignments[2]))
	}
	if n := len(f.Nodes(3)); n != 3 {
		t.Errorf("partition 3 of a 2.5-replica ring has %d nodes", n)
	}
	if n := len(f.Nodes(20)); n != 2 {
		t.Errorf("partition 20 of a 2.5-replica ring has %d nodes", n)
	}
	compareWithSwift(t, "testdata/swift-frac.ring.gz", f, true)
}

// The rings of the Swift cluster on this machine, when there is one, read as Swift reads them.
func TestLoadEtcSwift(t *testing.T) {
	const dir = "/etc/swift"
	if _, err := os.Stat(filepath.Join(dir, "object.ring.gz")); err != nil {
		t.Skipf("no Swift rings in %s", dir)
	}
	s, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Account == nil || s.Container == nil || s.Objects[0] == nil {
		t.Fatalf("LoadDir(%s) = %+v", dir, s)
	}
	prefix, suffix, found, err := ReadSwiftConf(filepath.Join(dir, ConfName))
	if err != nil || !found {
		t.Fatalf("swift.conf: %v %v", found, err)
	}
	check := func(name string, r *Ring) {
		if r.HashPrefix != prefix || r.HashSuffix != suffix {
			t.Errorf("%s: hash prefix/suffix %q %q, swift.conf says %q %q", name, r.HashPrefix, r.HashSuffix, prefix, suffix)
		}
		if err := r.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		// Swift's handoffs compare IPs and a test cluster's nodes share one, so only the
		// primaries and the partitions of names are compared here.
		compareWithSwift(t, filepath.Join(dir, name), r, false)
	}
	check("account.ring.gz", s.Account)
	check("container.ring.gz", s.Container)
	for policy, r := range s.Objects {
		name := "object.ring.gz"
		if policy != 0 {
			name = fmt.Sprintf("object-%d.ring.gz", policy)
		}
		check(name, r)
	}
}

// testRing is a small Cairn ring: 4 devices on 3 nodes in 2 zones, 3 replicas.
func testRing() *Ring {
	r := &Ring{PartPower: 4, HashPrefix: "pre", HashSuffix: "suf", Version: 7}
	r.Devices = []Device{
		{ID: 0, Region: 1, Zone: 1, Node: "10.0.0.1:6200", Name: "sda", Weight: 100, Meta: "first"},
		{ID: 3, Region: 1, Zone: 1, Node: "10.0.0.2:6200", Name: "sda", Weight: 100, ReplicationNode: "10.9.0.2:6300"},
		{ID: 4, Region: 1, Zone: 2, Node: "[fd00::3]:6200", Name: "sda", Weight: 50.5},
		{ID: 5, Region: 1, Zone: 2, Node: "10.0.0.4:6200", Name: "sdb", Weight: 0},
	}
	for rep := range 3 {
		row := make([]int, 16)
		for p := range row {
			row[p] = (p + rep) % 3
		}
		r.Assignments = append(r.Assignments, row)
	}
	return r
}

func encodeBytes(t *testing.T, r *Ring) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sameRing(a, b *Ring) bool {
	if a.PartPower != b.PartPower || a.HashPrefix != b.HashPrefix || a.HashSuffix != b.HashSuffix || a.Version != b.Version || a.NextPartPower != b.NextPartPower {
		return false
	}
	if !slices.Equal(a.Devices, b.Devices) || len(a.Assignments) != len(b.Assignments) {
		return false
	}
	for i := range a.Assignments {
		if !slices.Equal(a.Assignments[i], b.Assignments[i]) {
			return false
		}
	}
	if (a.Change == nil) != (b.Change == nil) {
		return false
	}
	if a.Change != nil {
		if !a.Change.Until.Equal(b.Change.Until) || len(a.Change.Previous) != len(b.Change.Previous) {
			return false
		}
		for i := range a.Change.Previous {
			if !slices.Equal(a.Change.Previous[i], b.Change.Previous[i]) {
				return false
			}
		}
	}
	return true
}

func TestRingFileRoundTrip(t *testing.T) {
	r := testRing()
	data := encodeBytes(t, r)
	got, err := Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !sameRing(r, got) {
		t.Fatalf("round trip:\n%+v\n%+v", r, got)
	}
	if again := encodeBytes(t, got); !bytes.Equal(again, data) {
		t.Error("the same ring encodes to different bytes")
	}
	if got.Checksum() != r.Checksum() || !strings.HasPrefix(r.Checksum(), "sha256:") {
		t.Errorf("checksums %s %s", got.Checksum(), r.Checksum())
	}
	// A Swift ring read and written by Cairn says the same to Swift.
	sw, err := Load("testdata/swift-frac.ring.gz")
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(bytes.NewReader(encodeBytes(t, sw)))
	if err != nil || !sameRing(sw, back) {
		t.Fatalf("Swift ring round trip: %v", err)
	}
}

// regzip replaces the content of a ring file, with a correct gzip CRC.
func regzip(t *testing.T, data []byte, edit func([]byte) []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(edit(raw))
	zw.Close()
	return buf.Bytes()
}

func TestRingFileCorruption(t *testing.T) {
	data := encodeBytes(t, testRing())
	// One device id changed in the rows: gzip's CRC is right, Cairn's checksum is not.
	flipped := regzip(t, data, func(raw []byte) []byte {
		raw[len(raw)-2] ^= 1
		return raw
	})
	if _, err := Decode(bytes.NewReader(flipped)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("changed row: %v", err)
	}
	// A damaged gzip stream: its CRC-32 catches it.
	bad := slices.Clone(data)
	bad[len(bad)-12] ^= 0x40
	if _, err := Decode(bytes.NewReader(bad)); err == nil {
		t.Error("a damaged gzip stream decoded")
	}
	for name, edit := range map[string]func([]byte) []byte{
		"truncated rows": func(raw []byte) []byte { return raw[:len(raw)-40] },
		"trailing data":  func(raw []byte) []byte { return append(raw, 0, 0) },
		"bad magic":      func(raw []byte) []byte { raw[0] = 'X'; return raw },
		"version 2":      func(raw []byte) []byte { raw[5] = 2; return raw },
		"huge header":    func(raw []byte) []byte { raw[6] = 0x7f; return raw },
	} {
		if _, err := Decode(bytes.NewReader(regzip(t, data, edit))); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Decode(strings.NewReader("not gzip")); !errors.Is(err, ErrInvalid) {
		t.Errorf("not gzip: %v", err)
	}
}

// Swift's own ring code loads a ring Cairn wrote, ignoring Cairn's extra header keys, and finds
// the same primaries and handoffs.
func TestSwiftReadsCairnRing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "object.ring.gz")
	r := testRing()
	if err := WriteFile(path, r); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil || !sameRing(r, got) {
		t.Fatalf("Load after WriteFile: %v", err)
	}
	compareWithSwift(t, path, got, true)

	// And a ring the builder made: three regions, zones, nodes with two devices.
	b, err := NewBuilder(7, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 9 {
		d := Device{ID: -1, Region: 1 + i%3, Zone: 1 + i%2, Node: fmt.Sprintf("10.%d.0.%d:6200", i%3, i/2), Name: fmt.Sprintf("sd%c", 'a'+i%2), Weight: float64(100 + 10*i)}
		if _, err := b.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Rebalance(time.Unix(1e9, 0), 5); err != nil {
		t.Fatal(err)
	}
	built, err := b.Ring()
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "container.ring.gz")
	if err := WriteFile(path, built); err != nil {
		t.Fatal(err)
	}
	if got, err = Load(path); err != nil {
		t.Fatal(err)
	}
	compareWithSwift(t, path, got, true)
}

func TestLoadDirSwiftConf(t *testing.T) {
	dir := t.TempDir()
	plain := testRing()
	plain.HashPrefix, plain.HashSuffix = "", ""
	for _, name := range []string{"account", "container", "object", "object-3"} {
		if err := WriteFile(filepath.Join(dir, name+".ring.gz"), plain); err != nil {
			t.Fatal(err)
		}
	}
	conf := "[swift-hash]\n# comment\nswift_hash_path_prefix = P1\nswift_hash_path_suffix: S1\n\n[storage-policy:0]\nname = gold\n"
	if err := os.WriteFile(filepath.Join(dir, ConfName), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Account == nil || s.Container == nil || s.Objects[0] == nil || s.Objects[3] == nil || len(s.Objects) != 2 {
		t.Fatalf("LoadDir: %+v", s)
	}
	if s.Objects[3].HashPrefix != "P1" || s.Objects[3].HashSuffix != "S1" {
		t.Errorf("hash from swift.conf: %q %q", s.Objects[3].HashPrefix, s.Objects[3].HashSuffix)
	}
	// The ring file's own prefix and suffix must agree with swift.conf beside it.
	if err := WriteFile(filepath.Join(dir, "object.ring.gz"), testRing()); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDir(dir); !errors.Is(err, ErrInvalid) {
		t.Errorf("conflicting hash prefix: %v", err)
	}
	// A swift.conf that defines only storage policies leaves rings their own hash.
	if err := os.WriteFile(filepath.Join(dir, ConfName), []byte("[storage-policy:0]\nname = gold\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = LoadDir(dir)
	if err != nil {
		t.Fatalf("swift.conf without [swift-hash]: %v", err)
	}
	if s.Objects[0].HashPrefix != testRing().HashPrefix || s.Objects[3].HashPrefix != "" {
		t.Errorf("hash with a swift.conf of policies only: %q %q", s.Objects[0].HashPrefix, s.Objects[3].HashPrefix)
	}
}

func TestEmbeddedDefaultPartitionsUnchanged(t *testing.T) {
	// The embedded default (empty prefix and suffix) hashes "/" + names as the earlier ring did
	// with an empty salt, so existing data stays where it is; values from md5 computed apart.
	r := SingleDevice("local", "d0", 10, "")
	for name, want := range map[string]uint32{"acct": 186, "acct/bucket": 469, "acct/bucket/key": 453} {
		a, c, o := splitName(name)
		if got := r.Partition(a, c, o); got != want {
			t.Errorf("partition of %s = %d, want %d", name, got, want)
		}
	}
	if got := SingleDevice("local", "d0", 10, "salt").Partition("acct", "bucket", "key"); got != 835 {
		t.Errorf("salted partition = %d, want 835", got)
	}
}
