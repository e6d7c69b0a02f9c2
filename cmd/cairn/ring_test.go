package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/ring"
)

func TestRingCommands(t *testing.T) {
	dir := t.TempDir()
	builder := filepath.Join(dir, "object.builder")
	ringDir := filepath.Join(dir, "etc")
	cairn := func(args ...string) string {
		t.Helper()
		out, err := runCairn(t, append([]string{"ring"}, args...)...)
		if err != nil {
			t.Fatalf("cairn ring %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	fails := func(want string, args ...string) {
		t.Helper()
		if _, err := runCairn(t, append([]string{"ring"}, args...)...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("cairn ring %s: %v, want an error saying %q", strings.Join(args, " "), err, want)
		}
	}
	cairn("create", builder, "--part-power", "8", "--replicas", "3", "--min-part-hours", "1", "--hash-path-prefix", "pre")
	fails("exists", "create", builder, "--part-power", "8", "--replicas", "3", "--min-part-hours", "1")
	fails("never rebalanced", "write", builder, ringDir)
	for i := 1; i <= 4; i++ {
		out := cairn("add", builder, "--region", "1", "--zone", strconv.Itoa(i), "--node", "10.0.0."+strconv.Itoa(i)+":6200", "--device", "sdb", "--weight", "100")
		if want := "added device " + strconv.Itoa(i-1) + ": r1z" + strconv.Itoa(i); !strings.HasPrefix(out, want) {
			t.Errorf("add printed %q, want %q...", out, want)
		}
	}
	fails("already device", "add", builder, "--zone", "1", "--node", "10.0.0.1:6200", "--device", "sdb", "--weight", "100")
	fails("host:port", "add", builder, "--zone", "1", "--node", "10.0.0.9", "--device", "sdb", "--weight", "100")
	fails(`"node"`, "add", builder, "--device", "sdb", "--weight", "100")

	moved := regexp.MustCompile(`^moved (\d+) partition-replicas \((\d+) partitions\); balance ([0-9.]+), dispersion ([0-9.]+); version (\d+)\n$`)
	m := moved.FindStringSubmatch(cairn("rebalance", builder, "--now", "2026-11-25T00:00:00Z"))
	if m == nil || m[1] != "768" || m[2] != "256" || m[3] != "0.00" || m[4] != "0.00" {
		t.Fatalf("first rebalance: %q", m)
	}
	var sh ringShow
	if err := json.Unmarshal([]byte(cairn("show", builder, "--json")), &sh); err != nil {
		t.Fatal(err)
	}
	if !sh.Rebalanced || sh.Kind != "builder" || len(sh.Stats.Devices) != 4 || sh.Stats.Devices[0].Parts != 192 || len(sh.Stats.Tiers) != 4 || sh.Zones != 4 {
		t.Fatalf("show --json: %+v", sh)
	}
	human := cairn("show", builder)
	for _, want := range []string{"256 partitions (power 8), 3 replicas, min_part_hours 1", "balance 0.00, dispersion 0.00 (region 0.00, zone 0.00, node 0.00, device 0.00)", "10.0.0.4:6200"} {
		if !strings.Contains(human, want) {
			t.Errorf("show printed no %q:\n%s", want, human)
		}
	}

	out := cairn("write", builder, ringDir)
	ringFile := filepath.Join(ringDir, "object.ring.gz")
	if !strings.HasPrefix(out, "wrote "+ringFile+": version ") {
		t.Errorf("write printed %q", out)
	}
	r, err := ring.Load(ringFile)
	if err != nil {
		t.Fatal(err)
	}
	if r.HashPrefix != "pre" || r.Replicas() != 3 || len(r.Devices) != 4 || strconv.FormatInt(r.Version, 10) != m[5] {
		t.Fatalf("ring file: prefix %q, %d replicas, %d devices, version %d", r.HashPrefix, r.Replicas(), len(r.Devices), r.Version)
	}
	if out := cairn("write", builder, ringDir); !strings.Contains(out, "up to date") {
		t.Errorf("second write printed %q", out)
	}
	if err := json.Unmarshal([]byte(cairn("show", ringFile, "--json")), &sh); err != nil || sh.Kind != "ring" || sh.Checksum != r.Checksum() {
		t.Fatalf("show of a ring file: %+v %v", sh, err)
	}

	// A device added within min_part_hours waits; after it, its share moves and no more.
	cairn("add", builder, "--zone", "5", "--node", "10.0.0.5:6200", "--device", "sdb", "--weight", "100")
	if out := cairn("rebalance", builder, "--now", "2026-11-25T00:30:00Z"); !strings.Contains(out, "nothing moved") || !strings.Contains(out, "wait for min_part_hours (1 h)") {
		t.Errorf("rebalance within min_part_hours printed %q", out)
	}
	m = moved.FindStringSubmatch(cairn("rebalance", builder, "--now", "2026-11-25T01:00:00Z"))
	if m == nil {
		t.Fatal("rebalance after an add printed no moves")
	}
	if n, _ := strconv.Atoi(m[1]); n < 153 || n > 154 {
		t.Fatalf("rebalance after an add: %q", m)
	}
	// The builder, and the rings it writes, carry that change until min_part_hours after it.
	sh = ringShow{}
	if err := json.Unmarshal([]byte(cairn("show", builder, "--json")), &sh); err != nil || sh.ChangeUntil == nil ||
		!sh.ChangeUntil.Equal(time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)) || sh.ChangedParts < 153 || sh.ChangedParts > 154 {
		t.Fatalf("show after a change: %+v %v", sh, err)
	}
	if out := cairn("show", builder); !strings.Contains(out, "last change: "+strconv.Itoa(sh.ChangedParts)+" partitions moved a replica; until 2026-11-25T02:00:00Z") {
		t.Errorf("show printed no last change:\n%s", out)
	}
	// That change is complete by now (the test's clock is in the past): nothing to end.
	if out := cairn("change-done", builder); out != "no change under way\n" {
		t.Errorf("change-done of a complete change printed %q", out)
	}

	// set-weight and remove by node and device, or by id.
	if out := cairn("set-weight", builder, "--node", "10.0.0.5:6200", "--device", "sdb", "--weight", "50"); out != "device 4: weight 50\n" {
		t.Errorf("set-weight printed %q", out)
	}
	fails("no device", "set-weight", builder, "--id", "9", "--weight", "1")
	fails("name the device", "remove", builder)
	if out := cairn("remove", builder, "--id", "0"); !strings.Contains(out, "device 0 (r1z1 10.0.0.1:6200/sdb weight 100) will be removed") {
		t.Errorf("remove printed %q", out)
	}
	out = cairn("rebalance", builder, "--now", "2026-11-25T03:00:00Z")
	if !strings.Contains(out, "removed 1 devices") {
		t.Errorf("rebalance after remove printed %q", out)
	}
	cairn("pretend-min-part-hours-passed", builder)
	cairn("rebalance", builder, "--now", "2026-11-25T03:00:00Z")
	cairn("write", builder, ringDir)
	r, err = ring.Load(ringFile)
	if err != nil || len(r.Devices) != 4 {
		t.Fatalf("ring after removal: %v", err)
	}
	st := r.Stats()
	if st.Dispersion != 0 || st.Balance > 1 {
		t.Errorf("ring after removal: balance %.2f, dispersion %.2f", st.Balance, st.Dispersion)
	}
	for _, d := range st.Devices {
		if d.ID == 4 && (d.Parts < 100 || d.Parts > 120) {
			t.Errorf("device 4 of weight 50 among 350 holds %d of 768", d.Parts)
		}
	}
	fails("no such file", "show", filepath.Join(dir, "missing.builder"))
	if err := os.WriteFile(filepath.Join(dir, "bad.builder"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	fails("builder file", "rebalance", filepath.Join(dir, "bad.builder"))
}
