package advisor

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func loadDefaults(t *testing.T) *Demands {
	t.Helper()
	d, err := DefaultDemands()
	if err != nil {
		t.Fatalf("the default demands: %v", err)
	}
	return d
}

// The shipped demands carry the figures of docs/benchmarks.md they were derived from: the
// cluster's server CPU per request is the proxy's plus three replicas' storage visits.
func TestDefaultDemandsMatchBenchmarks(t *testing.T) {
	d := loadDefaults(t)
	for _, tc := range []struct {
		op          string
		size        float64
		visits      float64
		clusterCPUs float64 // docs/benchmarks.md, cluster 1+4, quiet run: CPU s per request
	}{
		{"put", 4096, 3, 1.236e-3},
		{"put", 1 << 20, 3, 14.427e-3},
		{"get", 4096, 1, 0.214e-3},
		{"get", 1 << 20, 1, 1.235e-3},
	} {
		p, err := d.At(tc.op, tc.size)
		if err != nil {
			t.Fatal(err)
		}
		got := p.ProxyCPUSeconds + tc.visits*p.StorageCPUSeconds
		if math.Abs(got-tc.clusterCPUs)/tc.clusterCPUs > 0.01 {
			t.Errorf("%s %.0f: proxy + %g × storage = %.6f s, docs/benchmarks.md says %.6f", tc.op, tc.size, tc.visits, got, tc.clusterCPUs)
		}
	}
}

func TestDemandsInterpolation(t *testing.T) {
	d := loadDefaults(t)
	a, _ := d.At("put", 4096)
	b, _ := d.At("put", 1<<20)
	mid, _ := d.At("put", (4096+1<<20)/2)
	if want := (a.ProxyCPUSeconds + b.ProxyCPUSeconds) / 2; math.Abs(mid.ProxyCPUSeconds-want) > 1e-12 {
		t.Errorf("CPU halfway = %g, want %g", mid.ProxyCPUSeconds, want)
	}
	// Disk operations follow how the object is stored: inline below the threshold (a share of
	// a WAL fsync), a file above it (its own fsyncs).
	small, _ := d.At("put", 60<<10)
	large, _ := d.At("put", 70<<10)
	if small.DataOps != a.DataOps || large.DataOps != b.DataOps {
		t.Errorf("data ops at 60 KiB %g (want %g), at 70 KiB %g (want %g)", small.DataOps, a.DataOps, large.DataOps, b.DataOps)
	}
	// Beyond the last point, bytes and CPU grow along the last segment.
	huge, _ := d.At("put", 64<<20)
	if huge.ClientInBytes < 64<<20 || huge.ProxyCPUSeconds < 30*b.ProxyCPUSeconds {
		t.Errorf("64 MiB PUT: %+v", huge)
	}
	if _, err := d.At("list", 0); !errors.Is(err, ErrNoDemand) {
		t.Errorf("list: %v, want ErrNoDemand", err)
	}
}

func TestDemandsValidation(t *testing.T) {
	y := strings.Replace(string(DefaultDemandsYAML()), "cores: 2", "cores: 0", 1)
	y = strings.Replace(y, "proxy_cpu_s: 0.000433, storage_cpu_s: 0.000268,\n       client_in_bytes: 4496", "proxy_cpu_s: -1, storage_cpu_s: 0.000268,\n       client_in_bytes: 4496", 1)
	_, err := ParseDemands("d.yaml", []byte(y))
	if !errors.Is(err, ErrInvalidDemands) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"d.yaml: invalid demands: measured_on.cores: must be > 0", "d.yaml: invalid demands: ops.put[0] (size 4096): proxy_cpu_s must be a finite number ≥ 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	// What YAML() writes, ParseDemands reads back the same.
	d := loadDefaults(t)
	out, err := d.YAML()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseDemands("again", out)
	if err != nil {
		t.Fatal(err)
	}
	if back.Ops["put"][1] != d.Ops["put"][1] || back.MeasuredOn != d.MeasuredOn {
		t.Errorf("round trip changed the demands")
	}
}
