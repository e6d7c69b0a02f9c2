package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompareShowsRatiosToTheFirstRun(t *testing.T) {
	a := &Report{Kind: "run", Ops: map[string]*OpStats{"put": {Operations: 100, OpsPerSec: 1000, MBPerSec: 4, Latency: Latency{P50: 2, P99: 10, P999: 20}}}}
	b := &Report{Kind: "run", Ops: map[string]*OpStats{
		"put": {Operations: 400, OpsPerSec: 4000, MBPerSec: 16, Latency: Latency{P50: 1, P99: 5, P999: 10}, Errors: 3},
		"get": {OpsPerSec: 9000},
	}}
	var out strings.Builder
	if err := Compare(&out, []string{"minio", "cairn"}, []*Report{a, b}); err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		"put ops/s 1000.00 4000.00 4.00x",
		"put p50 ms 2.00 1.00 0.50x",
		"get ops/s - 9000.00",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("comparison lacks %q:\n%s", want, out.String())
		}
	}
	if err := Compare(&out, []string{"one"}, []*Report{a}); err == nil {
		t.Error("a single run compared without complaint")
	}
}

func TestReadReport(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	data, _ := json.Marshal(&Report{Kind: "fill", Ops: map[string]*OpStats{"put": {Operations: 1}}})
	os.WriteFile(good, data, 0o644)
	if r, err := ReadReport(good); err != nil || r.Ops["put"].Operations != 1 {
		t.Fatalf("ReadReport = %+v, %v", r, err)
	}
	for name, content := range map[string]string{"garbage.json": "not json", "empty.json": "{}"} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		if _, err := ReadReport(p); err == nil {
			t.Errorf("%s read as a report", name)
		}
	}
	if _, err := ReadReport(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file read as a report")
	}
}
