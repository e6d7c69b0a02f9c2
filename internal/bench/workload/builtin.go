package workload

import "strings"

// builtinDef is a built-in workload. Every built-in runs 30s at concurrency 16 on uniformly
// chosen keys, after writing its key space once (prepopulate), so that GETs and DELETEs find
// objects; the large ones have 100 objects instead of 1000 so that this fill stays short.
type builtinDef struct {
	name, description string
	size              SizeDist
	mix               [3]float64 // get, put, delete
	objects           int64
}

const (
	kib = 1 << 10
	mib = 1 << 20
	kb  = 1000
	mb  = 1000 * 1000
)

// builtins is the table of built-in workloads, in the order BuiltinNames lists them: the only
// package-level state.
var builtins = []builtinDef{
	// A is MOS workload A from the "cloud object store workloads" talk: small objects,
	// read-mostly.
	{"A", `MOS workload A ("cloud object store workloads" talk): small objects 1KiB–128KiB, GET 90 / PUT 5 / DELETE 5`,
		UniformSize(1*kib, 128*kib), [3]float64{90, 5, 5}, 1000},
	// B is MOS workload B from the same talk: small objects, write-mostly.
	{"B", `MOS workload B ("cloud object store workloads" talk): small objects 1KiB–128KiB, GET 5 / PUT 90 / DELETE 5`,
		UniformSize(1*kib, 128*kib), [3]float64{5, 90, 5}, 1000},
	// C is MOS workload C from the same talk: large objects, read-mostly.
	{"C", `MOS workload C ("cloud object store workloads" talk): large objects 1MiB–128MiB, GET 90 / PUT 5 / DELETE 5`,
		UniformSize(1*mib, 128*mib), [3]float64{90, 5, 5}, 100},
	// D is MOS workload D from the same talk: large objects, write-mostly.
	{"D", `MOS workload D ("cloud object store workloads" talk): large objects 1MiB–128MiB, GET 5 / PUT 90 / DELETE 5`,
		UniformSize(1*mib, 128*mib), [3]float64{5, 90, 5}, 100},
	// small-upload is from the Swift benchmarking blog post (the seed of cairn bench): small
	// objects of 1KB–100KB in decimal units, as the post gives them, mostly PUTs.
	{"small-upload", "Swift benchmarking blog post: small objects 1KB–100KB (decimal), GET 5 / PUT 90 / DELETE 5",
		UniformSize(1*kb, 100*kb), [3]float64{5, 90, 5}, 1000},
	// small-download is from the same post: small objects, mostly GETs.
	{"small-download", "Swift benchmarking blog post: small objects 1KB–100KB (decimal), GET 90 / PUT 5 / DELETE 5",
		UniformSize(1*kb, 100*kb), [3]float64{90, 5, 5}, 1000},
	// large-upload is from the same post: large objects of 1MB–10MB (decimal), mostly PUTs.
	{"large-upload", "Swift benchmarking blog post: large objects 1MB–10MB (decimal), GET 5 / PUT 90 / DELETE 5",
		UniformSize(1*mb, 10*mb), [3]float64{5, 90, 5}, 100},
	// large-download is from the same post: large objects, mostly GETs.
	{"large-download", "Swift benchmarking blog post: large objects 1MB–10MB (decimal), GET 90 / PUT 5 / DELETE 5",
		UniformSize(1*mb, 10*mb), [3]float64{90, 5, 5}, 100},
}

// Builtin returns a fresh, normalized copy of the built-in workload name (case-insensitive):
// A, B, C, D, small-upload, small-download, large-upload, large-download.
func Builtin(name string) (*Spec, bool) {
	for _, b := range builtins {
		if strings.EqualFold(b.name, strings.TrimSpace(name)) {
			return b.spec(), true
		}
	}
	return nil, false
}

// BuiltinNames lists the built-in workloads.
func BuiltinNames() []string {
	names := make([]string, len(builtins))
	for i, b := range builtins {
		names[i] = b.name
	}
	return names
}

func (b builtinDef) spec() *Spec {
	yes := true
	s := &Spec{
		Name:        b.name,
		Description: b.description,
		Objects:     b.objects,
		Size:        b.size.clone(),
		Mix:         Mix{OpGet: b.mix[0], OpPut: b.mix[1], OpDelete: b.mix[2]},
		Keys:        KeyDist{Kind: KeysUniform},
		Concurrency: DefaultConcurrency,
		Duration:    Duration(DefaultDuration),
		Prepopulate: &yes,
	}
	if err := s.Normalize(); err != nil {
		panic("workload: built-in " + b.name + " is invalid: " + err.Error()) // a bug, caught by the tests
	}
	return s
}
