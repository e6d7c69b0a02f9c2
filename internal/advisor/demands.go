package advisor

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrInvalidDemands is wrapped by every problem of a demands file.
var ErrInvalidDemands = errors.New("invalid demands")

// ErrNoDemand is returned when the demands have no figures for an operation the workload uses.
var ErrNoDemand = errors.New("no demands for operation")

// DemandsSchema is the demands format version this build reads and writes.
const DemandsSchema = 1

//go:embed demands.default.yaml
var defaultDemands []byte

// DefaultDemands is the demands file shipped with Cairn: derived from the measurements in
// docs/benchmarks.md (the file says how), until `cairn advisor calibrate` measures better.
func DefaultDemands() (*Demands, error) { return ParseDemands("demands.default.yaml", defaultDemands) }

// DefaultDemandsYAML is the shipped demands file as it is embedded.
func DefaultDemandsYAML() []byte { return bytes.Clone(defaultDemands) }

// Demands are the resources one request costs, per operation and object size: what the
// model multiplies by throughput. Storage-side figures are per storage visit (one replica or
// one EC fragment written or read), so that the model can apply any durability policy;
// proxy-side figures are per client request.
type Demands struct {
	Schema int `yaml:"schema"`
	// Source says how the figures were obtained: measured by calibrate, or derived.
	Source     string  `yaml:"source"`
	MeasuredOn Machine `yaml:"measured_on"`
	// InlineThreshold is the object size up to which the storage node keeps an object in its
	// LSM (group-committed WAL) instead of a file of its own; disk operations differ on either
	// side of it, so they are never interpolated across it.
	InlineThreshold int64 `yaml:"inline_threshold"`
	// ECEncodeMBpsPerCore is the proxy's erasure-encoding speed, for EC policies.
	ECEncodeMBpsPerCore float64 `yaml:"ec_encode_mbps_per_core"`
	// BaseLatencyMs is the fixed part of every request's latency that no resource of the
	// model accounts for (network round trips, scheduling).
	BaseLatencyMs float64 `yaml:"base_latency_ms"`
	// Background is the CPU a node of each role spends with no requests at all (the Go
	// runtime, the storage daemons: replicator, auditor, updater), in cores of the measuring
	// machine. It is taken off every node's cores before requests are counted (a few
	// thousandths of a core on the bench machine: negligible on a server, a few percent of a
	// node held to a fifth of a core).
	Background Background `yaml:"background,omitempty"`
	// Ops maps an operation (get, put, delete, head, list) to its points, by object size.
	Ops map[string][]Point `yaml:"ops"`
}

// Machine is where demands were measured: CPU figures are relative to one of its cores.
type Machine struct {
	Host     string `yaml:"host,omitempty"`
	CPU      string `yaml:"cpu"`
	Cores    int    `yaml:"cores"`
	Date     string `yaml:"date"`
	Commit   string `yaml:"commit,omitempty"`
	Replicas int    `yaml:"replicas"` // the policy the cluster ran with
	Note     string `yaml:"note,omitempty"`
}

// Background is idle CPU per node, by role (a sumo node pays both).
type Background struct {
	ProxyCores   float64 `yaml:"proxy_cores"`
	StorageCores float64 `yaml:"storage_cores"`
}

// Point is the demand of one request of one operation at one object size.
type Point struct {
	Size int64 `yaml:"size"` // object bytes
	// ProxyCPUSeconds is CPU seconds on the proxy tier per client request, and
	// ProxyCPUPerVisitSeconds what it adds per storage visit: a proxy sends a PUT's body to
	// every replica, so its CPU per PUT grows with the replicas (calibrate measures it with one
	// replica and with the configured ones; 0 where not measured).
	ProxyCPUSeconds         float64 `yaml:"proxy_cpu_s"`
	ProxyCPUPerVisitSeconds float64 `yaml:"proxy_cpu_per_visit_s,omitempty"`
	// LocalVisitSavingSeconds is the CPU a visit saves when the proxy's own process holds the
	// replica: a sumo node reaches its own devices in process, without the HTTP request the
	// proxy sends and the storage node serves (calibrate: one proxy and one storage node
	// against one sumo node; 0 where not measured).
	LocalVisitSavingSeconds float64 `yaml:"local_visit_saving_s,omitempty"`
	// StorageCPUSeconds is CPU seconds on the storage tier per storage visit.
	StorageCPUSeconds float64 `yaml:"storage_cpu_s"`
	// Client bytes cross client ↔ load balancer ↔ proxy: in is the request, out the response.
	ClientInBytes  float64 `yaml:"client_in_bytes"`
	ClientOutBytes float64 `yaml:"client_out_bytes"`
	// Backend bytes cross proxy ↔ storage per visit: out is proxy → storage.
	BackendOutBytes float64 `yaml:"backend_out_bytes"`
	BackendInBytes  float64 `yaml:"backend_in_bytes"`
	// Per storage visit, on the device holding the object (data) and on the device holding
	// the listing (container DB) when it has one of its own.
	DataOps      float64 `yaml:"data_ops"`
	DataBytes    float64 `yaml:"data_bytes"`
	ListingOps   float64 `yaml:"listing_ops"`
	ListingBytes float64 `yaml:"listing_bytes"`
	Fsyncs       float64 `yaml:"fsyncs"` // of DataOps + ListingOps, the synchronous flushes
}

// LoadDemands reads and validates a demands file.
func LoadDemands(path string) (*Demands, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading demands: %w", err)
	}
	return ParseDemands(path, data)
}

// ParseDemands decodes a demands file strictly and validates it.
func ParseDemands(name string, data []byte) (*Demands, error) {
	d := &Demands{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(d); err != nil {
		msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
		return nil, fmt.Errorf("%s: %w: %s", name, ErrInvalidDemands, msg)
	}
	for op := range d.Ops {
		slices.SortFunc(d.Ops[op], func(a, b Point) int { return int(a.Size - b.Size) })
	}
	if err := joinProblems(ErrInvalidDemands, name, d.problems()); err != nil {
		return nil, err
	}
	return d, nil
}

// Validate reports every problem of the demands, one line each.
func (d *Demands) Validate() error { return joinProblems(ErrInvalidDemands, "", d.problems()) }

func (d *Demands) problems() []string {
	var probs []string
	bad := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	if d.Schema != DemandsSchema {
		bad("schema: is %d, this build reads %d", d.Schema, DemandsSchema)
	}
	if d.MeasuredOn.Cores <= 0 {
		bad("measured_on.cores: must be > 0")
	}
	if d.MeasuredOn.Replicas <= 0 {
		bad("measured_on.replicas: must be > 0")
	}
	if d.InlineThreshold < 0 {
		bad("inline_threshold: must not be negative")
	}
	if d.ECEncodeMBpsPerCore <= 0 {
		bad("ec_encode_mbps_per_core: must be > 0")
	}
	if d.BaseLatencyMs < 0 {
		bad("base_latency_ms: must not be negative")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"background.proxy_cores", d.Background.ProxyCores}, {"background.storage_cores", d.Background.StorageCores}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			bad("%s: must be a finite number ≥ 0", f.name)
		}
	}
	for _, need := range []string{"get", "put"} {
		if len(d.Ops[need]) == 0 {
			bad("ops.%s: no points", need)
		}
	}
	ops := make([]string, 0, len(d.Ops))
	for op := range d.Ops {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		if !slices.Contains([]string{"get", "put", "delete", "head", "list"}, op) {
			bad("ops.%s: unknown operation (get, put, delete, head, list)", op)
		}
		for i, p := range d.Ops[op] {
			w := fmt.Sprintf("ops.%s[%d] (size %d)", op, i, p.Size)
			if p.Size < 0 {
				bad("%s: size must not be negative", w)
			}
			if i > 0 && d.Ops[op][i-1].Size == p.Size {
				bad("%s: size given twice", w)
			}
			for _, f := range []struct {
				name string
				v    float64
			}{{"proxy_cpu_s", p.ProxyCPUSeconds}, {"proxy_cpu_per_visit_s", p.ProxyCPUPerVisitSeconds}, {"local_visit_saving_s", p.LocalVisitSavingSeconds}, {"storage_cpu_s", p.StorageCPUSeconds},
				{"client_in_bytes", p.ClientInBytes}, {"client_out_bytes", p.ClientOutBytes},
				{"backend_out_bytes", p.BackendOutBytes}, {"backend_in_bytes", p.BackendInBytes},
				{"data_ops", p.DataOps}, {"data_bytes", p.DataBytes}, {"listing_ops", p.ListingOps},
				{"listing_bytes", p.ListingBytes}, {"fsyncs", p.Fsyncs}} {
				if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
					bad("%s: %s must be a finite number ≥ 0", w, f.name)
				}
			}
		}
	}
	return probs
}

// At is the demand of op at object size bytes. CPU seconds and bytes are interpolated
// linearly between the two nearest points (and extrapolated along the nearest segment, never
// below zero), because both grow with the bytes handled; operation counts (disk operations,
// fsyncs) are taken from the nearest point on the same side of the inline threshold, because
// they are a matter of how an object is stored, not of its size.
func (d *Demands) At(op string, size float64) (Point, error) {
	pts := d.Ops[op]
	if len(pts) == 0 {
		return Point{}, fmt.Errorf("%w %q", ErrNoDemand, op)
	}
	var p Point
	if len(pts) == 1 {
		// One point: the byte fields keep their overhead and follow the size; CPU is flat.
		q := pts[0]
		p = q
		delta := size - float64(q.Size)
		for _, f := range []*float64{&p.ClientInBytes, &p.ClientOutBytes, &p.BackendOutBytes, &p.BackendInBytes, &p.DataBytes} {
			if *f >= float64(q.Size) && q.Size > 0 { // the field carries the body
				*f = math.Max(0, *f+delta)
			}
		}
	} else {
		i := sort.Search(len(pts), func(i int) bool { return float64(pts[i].Size) >= size })
		i = min(max(i, 1), len(pts)-1)
		a, b := pts[i-1], pts[i]
		t := (size - float64(a.Size)) / float64(b.Size-a.Size)
		lerp := func(x, y float64) float64 { return math.Max(0, x+(y-x)*t) }
		p = Point{
			ProxyCPUSeconds:         lerp(a.ProxyCPUSeconds, b.ProxyCPUSeconds),
			ProxyCPUPerVisitSeconds: lerp(a.ProxyCPUPerVisitSeconds, b.ProxyCPUPerVisitSeconds),
			LocalVisitSavingSeconds: lerp(a.LocalVisitSavingSeconds, b.LocalVisitSavingSeconds),
			StorageCPUSeconds:       lerp(a.StorageCPUSeconds, b.StorageCPUSeconds),
			ClientInBytes:           lerp(a.ClientInBytes, b.ClientInBytes),
			ClientOutBytes:          lerp(a.ClientOutBytes, b.ClientOutBytes),
			BackendOutBytes:         lerp(a.BackendOutBytes, b.BackendOutBytes),
			BackendInBytes:          lerp(a.BackendInBytes, b.BackendInBytes),
			DataBytes:               lerp(a.DataBytes, b.DataBytes),
			ListingBytes:            lerp(a.ListingBytes, b.ListingBytes),
		}
		n := d.nearestSameSide(pts, size)
		p.DataOps, p.ListingOps, p.Fsyncs = n.DataOps, n.ListingOps, n.Fsyncs
	}
	p.Size = int64(math.Round(size))
	return p, nil
}

// nearestSameSide is the point nearest to size (in ratio) among those stored the same way
// (inline or as a file); any nearest point when that side has none.
func (d *Demands) nearestSameSide(pts []Point, size float64) Point {
	inline := size <= float64(d.InlineThreshold)
	best, bestDist, found := pts[0], math.Inf(1), false
	for _, q := range pts {
		same := (float64(q.Size) <= float64(d.InlineThreshold)) == inline
		dist := math.Abs(math.Log((float64(q.Size) + 1) / (size + 1)))
		if same && (!found || dist < bestDist) {
			best, bestDist, found = q, dist, true
		}
	}
	if found {
		return best
	}
	for _, q := range pts {
		dist := math.Abs(math.Log((float64(q.Size) + 1) / (size + 1)))
		if dist < bestDist {
			best, bestDist = q, dist
		}
	}
	return best
}

// YAML encodes the demands, for calibrate's output.
func (d *Demands) YAML() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("encoding demands: %w", err)
	}
	return b.Bytes(), nil
}
