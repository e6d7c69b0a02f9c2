package workload

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, doc string) *Spec {
	t.Helper()
	s, err := Parse("w.yaml", []byte(doc))
	if err != nil {
		t.Fatalf("Parse(%q): %v", doc, err)
	}
	return s
}

func TestParseForms(t *testing.T) {
	hist := SizeDist{Buckets: []SizeBucket{{4096, 4096, 70}, {1 << 20, 8 << 20, 30}}}
	for _, c := range []struct {
		name, doc string
		check     func(*Spec) any // returns the value to compare
		want      any
	}{
		{"size string", "mix: {put: 1}\nsize: 4KiB", func(s *Spec) any { return s.Size }, ConstantSize(4096)},
		{"size number", "mix: {put: 1}\nsize: 4096", func(s *Spec) any { return s.Size }, ConstantSize(4096)},
		{"size decimal", "mix: {put: 1}\nsize: 100KB", func(s *Spec) any { return s.Size }, ConstantSize(100_000)},
		{"size zero", "mix: {put: 1}\nsize: 0", func(s *Spec) any { return s.Size }, ConstantSize(0)},
		{"size default", "mix: {put: 1}", func(s *Spec) any { return s.Size }, ConstantSize(DefaultSize)},
		{"size constant", "mix: {put: 1}\nsize: {constant: 1MiB}", func(s *Spec) any { return s.Size }, ConstantSize(1 << 20)},
		{"size uniform", "mix: {put: 1}\nsize: {min: 1KiB, max: 128KiB}", func(s *Spec) any { return s.Size }, UniformSize(1024, 128<<10)},
		{"size max only", "mix: {put: 1}\nsize: {max: 1KiB}", func(s *Spec) any { return s.Size }, UniformSize(0, 1024)},
		{"size histogram", "mix: {put: 1}\nsize:\n  histogram:\n    - {size: 4KiB, weight: 70}\n    - {min: 1MiB, max: 8MiB, weight: 30}",
			func(s *Spec) any { return s.Size }, hist},
		{"mix", "mix: {get: 90, PUT: 5, delete: 5, head: 0.5}", func(s *Spec) any { return s.Mix },
			Mix{OpGet: 90, OpPut: 5, OpDelete: 5, OpHead: 0.5}},
		{"keys default", "mix: {put: 1}", func(s *Spec) any { return s.Keys }, KeyDist{Kind: KeysUniform}},
		{"keys scalar", "mix: {put: 1}\nkeys: sequential", func(s *Spec) any { return s.Keys }, KeyDist{Kind: KeysSequential}},
		{"keys zipf default s", "mix: {put: 1}\nkeys: Zipf", func(s *Spec) any { return s.Keys }, KeyDist{Kind: KeysZipf, S: 1.1}},
		{"keys zipf", "mix: {put: 1}\nkeys: {kind: zipf, s: 1.3}", func(s *Spec) any { return s.Keys }, KeyDist{Kind: KeysZipf, S: 1.3}},
		{"duration string", "mix: {put: 1}\nduration: 2m", func(s *Spec) any { return s.Duration.D() }, 2 * time.Minute},
		{"duration seconds", "mix: {put: 1}\nduration: 45", func(s *Spec) any { return s.Duration.D() }, 45 * time.Second},
		{"duration fraction", "mix: {put: 1}\nduration: 0.5", func(s *Spec) any { return s.Duration.D() }, 500 * time.Millisecond},
		{"duration default", "mix: {put: 1}", func(s *Spec) any { return s.Duration.D() }, 30 * time.Second},
		{"operations, no duration", "mix: {put: 1}\noperations: 10", func(s *Spec) any { return s.Duration.D() }, time.Duration(0)},
		{"defaults", "mix: {put: 1}", func(s *Spec) any {
			return []any{s.Name, s.Buckets, s.BucketPrefix, s.Objects, s.Concurrency, s.Rate, *s.Prepopulate, s.Cleanup}
		}, []any{"w", 1, "cairn-bench", int64(1000), 16, 0.0, false, false}},
		{"prepopulate for get", "mix: {get: 1}", func(s *Spec) any { return *s.Prepopulate }, true},
		{"prepopulate for head", "mix: {head: 1, put: 1}", func(s *Spec) any { return *s.Prepopulate }, true},
		{"prepopulate for list only", "mix: {list: 1}", func(s *Spec) any { return *s.Prepopulate }, false},
		{"prepopulate explicit", "mix: {get: 1}\nprepopulate: false", func(s *Spec) any { return *s.Prepopulate }, false},
		{"buckets", "mix: {put: 1}\nbuckets: 3\nbucket_prefix: bench", func(s *Spec) any { return s.BucketNames() },
			[]string{"bench-0", "bench-1", "bench-2"}},
		{"one bucket", "mix: {put: 1}\nbucket_prefix: bench", func(s *Spec) any { return s.BucketNames() }, []string{"bench"}},
		{"stage defaults", "mix: {put: 1}\nstages:\n  - {}\n  - {kind: Ramp, ramp: {}}", func(s *Spec) any {
			return []any{s.Stages[0].Name, s.Stages[0].Kind, s.Stages[1].Name, s.Stages[1].Kind, *s.Stages[1].Ramp}
		}, []any{"stage-1", StageMain, "stage-2", StageRamp,
			Ramp{Start: 1, Max: 256, StepDuration: Duration(10 * time.Second), MinGain: 0.05, Patience: 2, LatencyFactor: 3}}},
		{"event defaults", "mix: {put: 1}\nstages:\n  - events: [{command: 'true'}]", func(s *Spec) any { return s.Stages[0].Events },
			[]Event{{Name: "event-1", Command: "true", Timeout: Duration(time.Minute)}}},
		{"yaml anchors within", "mix: {put: 1}\nsize:\n  histogram:\n    - &small {size: 1KiB, weight: 2}\n    - *small",
			func(s *Spec) any { return s.Size }, SizeDist{Buckets: []SizeBucket{{1024, 1024, 2}, {1024, 1024, 2}}}},
		{"yaml anchors", "stages:\n  - {name: a, mix: &m {get: 1}}\n  - {name: b, mix: *m}", func(s *Spec) any { return *s.Stages[1].Mix },
			Mix{OpGet: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := mustParse(t, c.doc)
			if got := c.check(s); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestParseErrors checks that every kind of mistake is one line naming the file, the line
// and the field.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		// Decoding.
		{"mix: {get: 1}\nsise: 4KiB", `w.yaml:2: unknown field "sise" (known: name, description, buckets,`},
		{"mix: {get: 1}\nstages:\n  - name: s\n    concurency: 3", `w.yaml:4: stage "s": unknown field "concurency" (known: name, kind,`},
		{"mix: {get: 1}\nstages:\n  - name: a\n    kind: ramp\n    ramp: {start: 8, mux: 4}", `w.yaml:5: stage "a": ramp: unknown field "mux"`},
		{"mix: {get: 1}\nstages:\n  - events: [{command: x, when: 3s}]", `w.yaml:3: stage "stage-1": event "event-1": unknown field "when"`},
		{"mix: {get: 1}\nconcurrency: lots", `w.yaml:2: concurrency: want a whole number, got "lots"`},
		{"mix: {get: 1}\nobjects: 1e30", `w.yaml:2: objects: want a whole number, got "1e30"`},
		{"mix: {get: 1}\nrate: fast", `w.yaml:2: rate: want a number, got "fast"`},
		{"mix: {get: 1}\ncleanup: maybe", `w.yaml:2: cleanup: want true or false, got "maybe"`},
		{"mix: {get: 1}\nstages: 4", `w.yaml:2: stages: want a list of stages, got "4"`},
		{"mix: {get: 1}\nstages:\n  - 4", `w.yaml:3: stage "stage-1": want a mapping, got "4"`},
		{"mix: {get: 1}\nstages:\n  - {name: r, kind: ramp, ramp: {start: x}}", `w.yaml:3: stage "r": ramp: start: want a whole number, got "x"`},
		{"mix: {get: 1}\nmix: {put: 1}", `w.yaml:2: mix: given twice (first at line 1)`},
		{"- a\n- b", `w.yaml:1: want a mapping of workload fields (name, size, mix, …), got a list`},
		{"[[[]]]", `w.yaml:1: want a mapping of workload fields (name, size, mix, …), got a list`},
		{"mix: {get: 1}\nstages: [[[]]]", `w.yaml:2: stage "stage-1": want a mapping, got a list`},
		{"mix: {get: 1}\nstages: [{name: a, events: [[]]}]", `w.yaml:2: stage "a": event "event-1": want a mapping, got a list`},
		{"mix: {get: 1}\nstages: [{name: a, kind: ramp, ramp: 5}]", `w.yaml:2: stage "a": ramp: want a mapping, got "5"`},
		{"mix: {get: 1}\nstages: [{name: a, kind: {x: 1}}]", `w.yaml:2: stage "a": kind: want a string, got a mapping`},
		{"mix: {get: 1}\nconcurrency: 0.5", `w.yaml:2: concurrency: want a whole number, got "0.5"`},
		{"mix: {get: 1}\nstages:\n  - {name: r, kind: ramp, ramp: {max: 2.5}}", `w.yaml:3: stage "r": ramp: max: want a whole number, got "2.5"`},
		{"mix: {get: 1}\n---\nmix: {put: 1}", `w.yaml:2: a second YAML document`},
		{"mix: [get", `w.yaml:1: not valid YAML: `},
		{"", `w.yaml: empty workload file`},
		{"# only a comment", `w.yaml: empty workload file`},
		{"mix: {get: 1}\nduration: forever", `w.yaml:2: duration: want a duration such as 30s`},
		{"mix: {get: 1}\nduration: [1]", `w.yaml:2: duration: want a duration`},
		{"mix: {get: 1}\nduration: 1e300", `w.yaml:2: duration: duration "1e300" is out of range`},
		// Sizes.
		{"mix: {get: 1}\nsize: 4XB", `w.yaml:2: size: "4XB": want bytes or a number with KiB`},
		{"mix: {get: 1}\nsize: 1.3B", `w.yaml:2: size: "1.3B": not a whole number of bytes`},
		{"mix: {get: 1}\nsize: [4KiB]", `w.yaml:2: size: want a size (4KiB), {min: …, max: …}`},
		{"mix: {get: 1}\nsize: {}", `w.yaml:2: size: empty`},
		{"mix: {get: 1}\nsize: {min: 2KiB, mux: 1KiB}", `w.yaml:2: size: unknown field "mux" (known: constant, min, max, histogram)`},
		{"mix: {get: 1}\nsize: {min: 2KiB}", `w.yaml:2: size: max: missing`},
		{"mix: {get: 1}\nsize: {min: 2KiB, max: 1KiB}", `w.yaml:2: size: min: 2KiB is larger than max (1KiB)`},
		{"mix: {get: 1}\nsize: {constant: 1KiB, max: 2KiB}", `w.yaml:2: size: use one of constant, min/max and histogram`},
		{"mix: {get: 1}\nsize: 6GiB", `w.yaml:2: size: must be between 0 and 5GiB, got 6GiB`},
		{"mix: {get: 1}\nsize: {min: 1, max: 6GiB}", `w.yaml:2: size: max: must be between 0 and 5GiB`},
		{"mix: {get: 1}\nsize: {histogram: []}", `w.yaml:2: size: histogram: needs at least one entry`},
		{"mix: {get: 1}\nsize: {histogram: 4KiB}", `w.yaml:2: size: histogram: want a list`},
		{"mix: {get: 1}\nsize:\n  histogram:\n    - {size: 1KiB, weight: 1}\n    - {size: 1XiB, weight: 1}", `w.yaml:5: size: histogram[1]: size: "1XiB": want bytes`},
		{"mix: {get: 1}\nsize:\n  histogram:\n    - {size: 1KiB, weight: -1}", `w.yaml:4: size: histogram[0]: weight: must be a number ≥ 0, got -1`},
		{"mix: {get: 1}\nsize:\n  histogram:\n    - {size: 1KiB, weight: 0}", `w.yaml:3: size: histogram: at least one weight must be > 0`},
		{"mix: {get: 1}\nsize:\n  histogram:\n    - {size: 1KiB}", `w.yaml:4: size: histogram[0]: weight: missing`},
		{"mix: {get: 1}\nsize:\n  histogram:\n    - {size: 1KiB, weight: heavy}", `w.yaml:4: size: histogram[0]: weight: want a number, got "heavy"`},
		{"mix: {get: 1}\nsize:\n  histogram:\n    - {size: 1KiB, min: 1, weight: 1}", `w.yaml:4: size: histogram[0]: use size or min/max, not both`},
		{"mix: {get: 1}\nsize:\n  histogram:\n    - {min: 1KiB, weight: 1}", `w.yaml:4: size: histogram[0]: needs size, or both min and max`},
		{"mix: {get: 1}\nsize:\n  histogram:\n    - {min: 2KiB, max: 1KiB, weight: 1}", `w.yaml:4: size: histogram[0]: min 2KiB is larger than max 1KiB`},
		{"mix: {get: 1}\nsize:\n  histogram:\n    - {size: 1KiB, wieght: 1}", `w.yaml:4: size: histogram[0]: unknown field "wieght"`},
		// Mixes.
		{"name: x", `w.yaml: mix: missing: the operation mix`},
		{"mix: {get: 1, copy: 2}", `w.yaml:1: mix: unknown operation "copy" (want get, put, delete, head, list)`},
		{"mix: {get: 1, GET: 2}", `w.yaml:1: mix: get given twice`},
		{"mix: {get: lots}", `w.yaml:1: mix: get: want a number, got "lots"`},
		{"mix: [get]", `w.yaml:1: mix: want a mapping of operation to weight`},
		{"mix: {get: 0}", `w.yaml:1: mix: at least one weight must be > 0`},
		{"mix:\n  put: 1\n  get: -5", `w.yaml:3: mix: weight for "get" must be ≥ 0 and finite, got -5`},
		{"mix: {get: 1}\nstages:\n  - name: main\n    mix: {get: -1, put: 2}", `w.yaml:4: stage "main": mix: weight for "get" must be ≥ 0`},
		{"stages:\n  - name: m", `w.yaml:2: stage "m": mix: missing: give the stage an operation mix`},
		// Keys.
		{"mix: {get: 1}\nkeys: zopf", `w.yaml:2: keys: kind: unknown key distribution "zopf"`},
		{"mix: {get: 1}\nkeys: {kind: zipf, s: 0.5}", `w.yaml:2: keys: s: the zipf exponent must be > 1, got 0.5`},
		{"mix: {get: 1}\nkeys: {kind: uniform, s: 2}", `w.yaml:2: keys: s: only a zipf distribution has an exponent`},
		{"mix: {get: 1}\nkeys: {knd: zipf}", `w.yaml:2: keys: unknown field "knd" (known: kind, s)`},
		{"mix: {get: 1}\nkeys: {kind: [zipf]}", `w.yaml:2: keys: kind: want uniform, sequential or zipf`},
		{"mix: {get: 1}\nstages:\n  - name: z\n    keys: {kind: zipf, s: 1}", `w.yaml:4: stage "z": keys: s: the zipf exponent must be > 1, got 1`},
		// Top-level values.
		{"mix: {get: 1}\nconcurrency: -3", `w.yaml:2: concurrency: must be between 1 and 10000, got -3`},
		{"mix: {get: 1}\nconcurrency: 10001", `w.yaml:2: concurrency: must be between 1 and 10000, got 10001`},
		{"mix: {get: 1}\nbuckets: -1", `w.yaml:2: buckets: must be between 1 and 10000, got -1`},
		{"mix: {get: 1}\nobjects: -1", `w.yaml:2: objects: must be at least 1, got -1`},
		{"mix: {get: 1}\nrate: -1", `w.yaml:2: rate: must be ≥ 0 operations per second`},
		{"mix: {get: 1}\nrate: .nan", `w.yaml:2: rate: must be ≥ 0`},
		{"mix: {get: 1}\nduration: -5s", `w.yaml:2: duration: must be ≥ 0, got -5s`},
		{"mix: {get: 1}\noperations: -5", `w.yaml:2: operations: must be ≥ 0, got -5`},
		{"mix: {get: 1}\nduration: 10s\noperations: 5", `w.yaml:3: operations: set duration or operations, not both`},
		{"mix: {get: 1}\nbucket_prefix: Foo", `w.yaml:2: bucket_prefix: "Foo" does not make valid bucket names`},
		{"mix: {get: 1}\nbucket_prefix: ab", `w.yaml:2: bucket_prefix: "ab" does not make valid bucket names`},
		{"mix: {get: 1}\nbuckets: 10\nbucket_prefix: " + strings.Repeat("a", 62), `w.yaml:3: bucket_prefix: "aaa`},
		{"mix: {get: 1}\nprepopulate: false\nstages: [{kind: prepare}]", `w.yaml:2: prepopulate: false, but stage "stage-1" is a prepare stage`},
		// Stages.
		{"mix: {get: 1}\nstages:\n  - name: x\n  - name: x", `w.yaml:4: stage "x": name: "x" is also the name of stage 1`},
		{"mix: {get: 1}\nstages:\n  - name: x\n    kind: wobble", `w.yaml:4: stage "x": kind: unknown stage kind "wobble"`},
		{"mix: {get: 1}\nstages:\n  - {name: p, kind: prepare, mix: {put: 1}}", `w.yaml:3: stage "p": mix: not allowed in a prepare stage`},
		{"mix: {get: 1}\nstages:\n  - {name: p, kind: prepare, duration: 1m}", `w.yaml:3: stage "p": duration: not allowed in a prepare stage`},
		{"mix: {get: 1}\nstages:\n  - {name: p, kind: prepare, operations: 9}", `w.yaml:3: stage "p": operations: not allowed in a prepare stage`},
		{"mix: {get: 1}\nstages:\n  - {name: p, kind: prepare, keys: zipf}", `w.yaml:3: stage "p": keys: not allowed in a prepare stage`},
		{"mix: {get: 1}\nstages:\n  - {name: c, kind: cleanup, size: 1KiB}", `w.yaml:3: stage "c": size: not allowed in a cleanup stage`},
		{"mix: {get: 1}\nstages:\n  - {name: m, ramp: {}}", `w.yaml:3: stage "m": ramp: only a stage of kind ramp has ramp settings`},
		{"mix: {get: 1}\nstages:\n  - {name: m, concurrency: -1}", `w.yaml:3: stage "m": concurrency: must be between 1 and 10000 (or 0 to inherit), got -1`},
		{"mix: {get: 1}\nstages:\n  - {name: m, rate: -1}", `w.yaml:3: stage "m": rate: must be ≥ 0`},
		{"mix: {get: 1}\nstages:\n  - {name: m, duration: 1s, operations: 1}", `w.yaml:3: stage "m": operations: set duration or operations, not both`},
		{"mix: {get: 1}\nstages:\n  - {name: m, size: {min: 3, max: 2}}", `w.yaml:3: stage "m": size: min: 3B is larger than max (2B)`},
		// Ramps.
		{"mix: {get: 1}\nstages:\n  - {name: r, kind: ramp}", `w.yaml:3: stage "r": ramp: missing: a ramp stage needs ramp settings`},
		{"mix: {get: 1}\nstages:\n  - {name: r, kind: ramp, ramp: {}, concurrency: 4}", `w.yaml:3: stage "r": concurrency: not allowed in a ramp stage`},
		{"mix: {get: 1}\nstages:\n  - {name: r, kind: ramp, ramp: {}, rate: 4}", `w.yaml:3: stage "r": rate: not allowed in a ramp stage`},
		{"mix: {get: 1}\nstages:\n  - {name: r, kind: ramp, ramp: {}, duration: 4s}", `w.yaml:3: stage "r": duration: not allowed in a ramp stage`},
		{"mix: {get: 1}\nstages:\n  - {name: r, kind: ramp, ramp: {}, operations: 4}", `w.yaml:3: stage "r": operations: not allowed in a ramp stage`},
		{"mix: {get: 1}\nstages:\n  - {name: i, kind: idle}", `w.yaml:3: stage "i": duration: missing: an idle stage lasts its own duration`},
		{"mix: {get: 1}\nstages:\n  - {name: i, kind: idle, duration: 1m, mix: {put: 1}}", `w.yaml:3: stage "i": mix: not allowed in a idle stage: it sends nothing`},
		{"mix: {get: 1}\nstages:\n  - {name: i, kind: idle, duration: 1m, concurrency: 2}", `w.yaml:3: stage "i": concurrency: not allowed in a idle stage`},
		{"mix: {get: 1}\nstages:\n  - {name: i, kind: idle, duration: 1m, rate: 2}", `w.yaml:3: stage "i": rate: not allowed in a idle stage`},
		{"mix: {get: 1}\nstages:\n  - {name: i, kind: idle, duration: 1m, ramp: {}}", `w.yaml:3: stage "i": ramp: only a stage of kind ramp`},
		{"mix: {get: 1}\nstages:\n  - name: r\n    kind: ramp\n    ramp: {start: 8, max: 4}", `w.yaml:5: stage "r": ramp: max: must be between start (8) and 10000, got 4`},
		{"mix: {get: 1}\nstages:\n  - name: r\n    kind: ramp\n    ramp: {start: -1}", `w.yaml:5: stage "r": ramp: start: must be between 1 and 10000, got -1`},
		{"mix: {get: 1}\nstages:\n  - name: r\n    kind: ramp\n    ramp: {step: -1}", `w.yaml:5: stage "r": ramp: step: must be between 0`},
		{"mix: {get: 1}\nstages:\n  - name: r\n    kind: ramp\n    ramp: {step_duration: -1s}", `w.yaml:5: stage "r": ramp: step_duration: must be > 0, got -1s`},
		{"mix: {get: 1}\nstages:\n  - name: r\n    kind: ramp\n    ramp: {min_gain: -0.1}", `w.yaml:5: stage "r": ramp: min_gain: must be ≥ 0`},
		{"mix: {get: 1}\nstages:\n  - name: r\n    kind: ramp\n    ramp: {patience: -1}", `w.yaml:5: stage "r": ramp: patience: must be ≥ 1 step, got -1`},
		{"mix: {get: 1}\nstages:\n  - name: r\n    kind: ramp\n    ramp: {latency_factor: 0.5}", `w.yaml:5: stage "r": ramp: latency_factor: must be > 1`},
		// Events.
		{"mix: {get: 1}\nstages:\n  - name: x\n    events:\n      - at: 40s\n        command: ls", `w.yaml:5: stage "x": event "event-1": at: 40s is not before the end of the stage (30s)`},
		{"mix: {get: 1}\nstages:\n  - name: x\n    events:\n      - at: -1s\n        command: ls", `w.yaml:5: stage "x": event "event-1": at: must be ≥ 0`},
		{"mix: {get: 1}\nstages:\n  - name: x\n    duration: 1m\n    events:\n      - {name: e, at: 40s, command: ''}", `w.yaml:6: stage "x": event "e": command: missing: the shell command`},
		{"mix: {get: 1}\nstages:\n  - name: x\n    events:\n      - {name: e, command: a, timeout: -1s}", `w.yaml:5: stage "x": event "e": timeout: must be > 0`},
		{"mix: {get: 1}\nstages:\n  - name: x\n    events:\n      - {name: e, command: a}\n      - {name: e, command: b}", `w.yaml:6: stage "x": event "e": name: "e" is also the name of event 1`},
		{"mix: {get: 1}\nstages:\n  - {name: r, kind: ramp, ramp: {max: 4, step_duration: 10s}, events: [{at: 31s, command: a}]}",
			`w.yaml:3: stage "r": event "event-1": at: 31s is not before the end of the stage (30s)`},
	} {
		_, err := Parse("w.yaml", []byte(c.doc))
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want an error beginning %q", c.doc, c.want)
			continue
		}
		if got := err.Error(); !strings.HasPrefix(got, c.want) || strings.ContainsAny(got, "\n\r") {
			t.Errorf("Parse(%q):\n got  %s\n want %s…", c.doc, got, c.want)
		}
	}
}

// TestTestdata loads the example workloads, which double as documentation, and checks what
// they resolve to.
func TestTestdata(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("testdata: %v, %v", files, err)
	}
	for _, f := range files {
		s, err := Load(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if want := strings.TrimSuffix(filepath.Base(f), ".yaml"); s.Name != want {
			t.Errorf("%s: name %q, want %q", f, s.Name, want)
		}
		roundTrip(t, s)
	}

	s, err := Load("testdata/staged.yaml")
	if err != nil {
		t.Fatal(err)
	}
	stages := s.Resolved()
	var kinds, names []string
	for _, st := range stages {
		kinds, names = append(kinds, string(st.Kind)), append(names, st.Name)
	}
	if want := []string{"fill", "steady", "knee", "failover", "remove"}; !slices.Equal(names, want) {
		t.Errorf("stages %v, want %v", names, want)
	}
	if want := []string{"prepare", "main", "ramp", "main", "cleanup"}; !slices.Equal(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	fill, steady, knee, failover, remove := stages[0], stages[1], stages[2], stages[3], stages[4]
	if fill.Operations != 5000 || fill.Concurrency != 64 || fill.Duration != 0 || fill.Keys.Kind != KeysSequential ||
		!reflect.DeepEqual(fill.Mix, Mix{OpPut: 1}) || !reflect.DeepEqual(fill.Size, UniformSize(1024, 128<<10)) {
		t.Errorf("fill = %+v", fill)
	}
	if steady.Duration != time.Minute || steady.Operations != 0 || steady.Concurrency != 32 ||
		!reflect.DeepEqual(steady.Mix, Mix{OpGet: 90, OpPut: 5, OpDelete: 5}) || steady.Keys.Kind != KeysUniform {
		t.Errorf("steady = %+v", steady)
	}
	if knee.Ramp == nil || knee.Ramp.Max != 512 || knee.Ramp.Patience != 3 || knee.Concurrency != 1 ||
		!reflect.DeepEqual(knee.Mix, Mix{OpGet: 50, OpPut: 50}) {
		t.Errorf("knee = %+v, ramp %+v", knee, knee.Ramp)
	}
	if got := knee.Ramp.Levels(); !slices.Equal(got, []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}) {
		t.Errorf("ramp levels %v", got)
	}
	if failover.Duration != 3*time.Minute || failover.Keys != (KeyDist{Kind: KeysZipf, S: 1.1}) || len(failover.Events) != 2 ||
		failover.Events[0] != (Event{Name: "stop-node", At: Duration(time.Minute), Command: "systemctl --host node3 stop cairn", Timeout: Duration(time.Minute)}) ||
		failover.Events[1].At.D() != 2*time.Minute || failover.Events[1].Timeout.D() != 2*time.Minute {
		t.Errorf("failover = %+v", failover)
	}
	if remove.Operations != 5000 || !reflect.DeepEqual(remove.Mix, Mix{OpDelete: 1}) || !s.Cleanup {
		t.Errorf("remove = %+v, cleanup %v", remove, s.Cleanup)
	}

	s, err = Load("testdata/open-loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Resolved(); len(st) != 1 || st[0].Rate != 500 || st[0].Operations != 60000 || st[0].Duration != 0 || *s.Prepopulate {
		t.Errorf("open-loop = %+v", st)
	}

	s, err = Load("testdata/hot-objects.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var kindsHot []StageKind
	for _, st := range s.Resolved() {
		kindsHot = append(kindsHot, st.Kind)
	}
	if !slices.Equal(kindsHot, []StageKind{StagePrepare, StageMain, StageCleanup}) {
		t.Errorf("hot-objects stages %v, want prepare, main, cleanup", kindsHot)
	}
	if got := s.BucketNames(); len(got) != 4 || got[3] != "cairn-bench-hot-3" {
		t.Errorf("buckets %v", got)
	}
}

// roundTrip checks that the Spec's YAML parses back to the same stages.
func roundTrip(t *testing.T, s *Spec) {
	t.Helper()
	data, err := s.YAML()
	if err != nil {
		t.Fatalf("%s: YAML: %v", s.Name, err)
	}
	back, err := Parse(s.Name+".yaml", data)
	if err != nil {
		t.Fatalf("%s: YAML does not parse back: %v\n%s", s.Name, err, data)
	}
	if got, want := back.Resolved(), s.Resolved(); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: round trip changed the stages:\n got  %+v\n want %+v\n%s", s.Name, got, want, data)
	}
	if back.Name != s.Name || back.Description != s.Description || back.Objects != s.Objects ||
		!slices.Equal(back.BucketNames(), s.BucketNames()) {
		t.Errorf("%s: round trip changed the workload: %+v", s.Name, back)
	}
}

func TestBuiltins(t *testing.T) {
	want := map[string]struct {
		size    SizeDist
		mix     Mix
		objects int64
	}{
		"A":              {UniformSize(1<<10, 128<<10), Mix{OpGet: 90, OpPut: 5, OpDelete: 5}, 1000},
		"B":              {UniformSize(1<<10, 128<<10), Mix{OpGet: 5, OpPut: 90, OpDelete: 5}, 1000},
		"C":              {UniformSize(1<<20, 128<<20), Mix{OpGet: 90, OpPut: 5, OpDelete: 5}, 100},
		"D":              {UniformSize(1<<20, 128<<20), Mix{OpGet: 5, OpPut: 90, OpDelete: 5}, 100},
		"small-upload":   {UniformSize(1000, 100_000), Mix{OpGet: 5, OpPut: 90, OpDelete: 5}, 1000},
		"small-download": {UniformSize(1000, 100_000), Mix{OpGet: 90, OpPut: 5, OpDelete: 5}, 1000},
		"large-upload":   {UniformSize(1_000_000, 10_000_000), Mix{OpGet: 5, OpPut: 90, OpDelete: 5}, 100},
		"large-download": {UniformSize(1_000_000, 10_000_000), Mix{OpGet: 90, OpPut: 5, OpDelete: 5}, 100},
	}
	names := BuiltinNames()
	if len(names) != len(want) {
		t.Fatalf("BuiltinNames() = %v", names)
	}
	for _, name := range names {
		w, ok := want[name]
		if !ok {
			t.Fatalf("unexpected built-in %q", name)
		}
		s, ok := Builtin(strings.ToUpper(name))
		if !ok {
			t.Fatalf("Builtin(%q) not found", strings.ToUpper(name))
		}
		if s.Name != name || !reflect.DeepEqual(s.Size, w.size) || !reflect.DeepEqual(s.Mix, w.mix) || s.Objects != w.objects ||
			s.Concurrency != 16 || s.Duration.D() != 30*time.Second || s.Keys.Kind != KeysUniform || !*s.Prepopulate ||
			s.Description == "" {
			t.Errorf("%s = %+v", name, s)
		}
		st := s.Resolved()
		if len(st) != 2 || st[0].Kind != StagePrepare || st[0].Operations != w.objects || st[1].Kind != StageMain {
			t.Errorf("%s stages = %+v", name, st)
		}
		roundTrip(t, s)

		// A fresh copy each time: changing one does not change the next.
		s.Mix[OpGet] = 1234
		if again, _ := Builtin(name); again.Mix[OpGet] == 1234 {
			t.Errorf("%s: Builtin returns shared state", name)
		}
	}
	if _, ok := Builtin("E"); ok {
		t.Error(`Builtin("E") found`)
	}
}

func TestResolve(t *testing.T) {
	if s, err := Resolve("small-download"); err != nil || s.Name != "small-download" {
		t.Errorf("Resolve(small-download) = %v, %v", s, err)
	}
	if s, err := Resolve("testdata/basic.yaml"); err != nil || s.Name != "basic" {
		t.Errorf("Resolve(testdata/basic.yaml) = %v, %v", s, err)
	}
	_, err := Resolve("no-such-workload")
	if err == nil || !strings.Contains(err.Error(), "A, B, C, D, small-upload, small-download, large-upload, large-download") {
		t.Errorf("Resolve(no-such-workload) = %v, want an error listing the built-ins", err)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("mix: {get: 1}\nconcurrency: 0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(bad); err == nil || !strings.HasPrefix(err.Error(), bad+":2: concurrency:") {
		t.Errorf("Resolve(bad file) = %v", err)
	}
}

func TestApply(t *testing.T) {
	s := mustParse(t, `
mix: {get: 1}
concurrency: 4
stages:
  - {name: p, kind: prepare, concurrency: 2, size: 1KiB}
  - {name: m1, concurrency: 8, operations: 100, rate: 10, mix: {put: 1}}
  - {name: m2}
  - {name: r, kind: ramp, ramp: {}, keys: sequential}
`)
	zipf := KeyDist{Kind: KeysZipf}
	size := ConstantSize(1 << 20)
	if err := s.Apply(Overrides{Duration: time.Minute, Concurrency: 32, Rate: 50, Size: &size,
		Mix: Mix{OpHead: 1}, Keys: &zipf, Objects: 77, Buckets: 2, BucketPrefix: "flags"}); err != nil {
		t.Fatal(err)
	}
	st := s.Resolved()
	p, m1, m2, r := st[0], st[1], st[2], st[3]
	if p.Concurrency != 2 || p.Rate != 0 || !reflect.DeepEqual(p.Size, size) || p.Operations != 77 {
		t.Errorf("prepare = %+v: keeps its concurrency, takes the size and object count", p)
	}
	for _, m := range []ResolvedStage{m1, m2} {
		if m.Concurrency != 32 || m.Rate != 50 || m.Duration != time.Minute || m.Operations != 0 || !reflect.DeepEqual(m.Size, size) ||
			!reflect.DeepEqual(m.Mix, Mix{OpHead: 1}) || m.Keys != (KeyDist{Kind: KeysZipf, S: 1.1}) {
			t.Errorf("%s = %+v", m.Name, m)
		}
	}
	if !reflect.DeepEqual(r.Mix, Mix{OpHead: 1}) || r.Keys.Kind != KeysZipf {
		t.Errorf("ramp = %+v", r)
	}
	if got := s.BucketNames(); !slices.Equal(got, []string{"flags-0", "flags-1"}) {
		t.Errorf("buckets %v", got)
	}

	// Operations replace a duration, and the other way round.
	if err := s.Apply(Overrides{Operations: 500}); err != nil {
		t.Fatal(err)
	}
	if m := s.Resolved()[1]; m.Operations != 500 || m.Duration != 0 {
		t.Errorf("after --operations: %+v", m)
	}
	if err := s.Apply(Overrides{Duration: time.Second, Operations: 5}); err == nil {
		t.Error("Apply with a duration and operations succeeded")
	}
	if err := s.Apply(Overrides{Concurrency: -1}); err == nil || !strings.Contains(err.Error(), "concurrency: must be between 1 and 10000, got -1") {
		t.Errorf("Apply(concurrency -1) = %v", err)
	}

	// A defaulted prepopulate follows the mix the flags give; an explicit one stays.
	s = mustParse(t, "mix: {put: 1}")
	if *s.Prepopulate {
		t.Fatal("put-only workload prepopulates")
	}
	if err := s.Apply(Overrides{Mix: Mix{OpGet: 1}}); err != nil || !*s.Prepopulate || s.Resolved()[0].Kind != StagePrepare {
		t.Errorf("after --mix get=1: prepopulate %v, %v", *s.Prepopulate, err)
	}
	s = mustParse(t, "mix: {put: 1}\nprepopulate: false")
	if err := s.Apply(Overrides{Mix: Mix{OpGet: 1}}); err != nil || *s.Prepopulate {
		t.Errorf("explicit prepopulate: false was overridden (%v)", err)
	}
}

func TestSynthesizedStages(t *testing.T) {
	for _, c := range []struct {
		doc  string
		want []string
	}{
		{"mix: {put: 1}", []string{"main:main"}},
		{"mix: {get: 1}", []string{"prepare:prepare", "main:main"}},
		{"mix: {get: 1}\ncleanup: true", []string{"prepare:prepare", "main:main", "cleanup:cleanup"}},
		{"mix: {put: 1}\nprepopulate: true\ncleanup: true", []string{"prepare:prepare", "main:main", "cleanup:cleanup"}},
		// With stages listed, a needed prepare stage is still added unless one is listed.
		{"mix: {get: 1}\nstages: [{name: prepare}]", []string{"prepare-2:prepare", "prepare:main"}},
		{"mix: {get: 1}\nstages: [{name: a}, {name: b, kind: cleanup}]", []string{"prepare:prepare", "a:main", "b:cleanup"}},
		{"mix: {get: 1}\nstages: [{name: f, kind: prepare}, {name: a}]", []string{"f:prepare", "a:main"}},
		{"mix: {get: 1}\ncleanup: true\nstages: [{name: a}]", []string{"prepare:prepare", "a:main", "cleanup:cleanup"}},
	} {
		var got []string
		for _, st := range mustParse(t, c.doc).Resolved() {
			got = append(got, st.Name+":"+string(st.Kind))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: stages %v, want %v", c.doc, got, c.want)
		}
	}
}

func TestRampLevels(t *testing.T) {
	for _, c := range []struct {
		r    Ramp
		want []int
	}{
		{Ramp{Start: 1, Max: 8}, []int{1, 2, 4, 8}},
		{Ramp{Start: 3, Max: 10}, []int{3, 6, 10}},
		{Ramp{Start: 4, Step: 4, Max: 16}, []int{4, 8, 12, 16}},
		{Ramp{Start: 5, Step: 10, Max: 20}, []int{5, 15, 20}},
		{Ramp{Start: 7, Max: 7}, []int{7}},
		{Ramp{Start: 8, Max: 4}, nil},
	} {
		if got := c.r.Levels(); !slices.Equal(got, c.want) {
			t.Errorf("%+v: Levels() = %v, want %v", c.r, got, c.want)
		}
		if got := c.r.numLevels(); got != len(c.want) {
			t.Errorf("%+v: numLevels() = %d, want %d", c.r, got, len(c.want))
		}
	}
	r := Ramp{Start: 1, Max: 8, StepDuration: Duration(10 * time.Second)}
	if got := r.MaxDuration(); got != 40*time.Second {
		t.Errorf("MaxDuration() = %v", got)
	}
}

func TestDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"30s": 30 * time.Second, "2m": 2 * time.Minute, "1h30m": 90 * time.Minute, "30": 30 * time.Second,
		"1.5": 1500 * time.Millisecond, "250ms": 250 * time.Millisecond, "0": 0,
	} {
		got, err := ParseDuration(in)
		if err != nil || got.D() != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back, err := ParseDuration(got.String()); err != nil || back != got {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", got.String(), back, err, got)
		}
	}
	for d, want := range map[time.Duration]string{
		30 * time.Second: "30s", 2 * time.Minute: "2m", time.Hour: "1h", 90 * time.Second: "1m30s", 0: "0s",
	} {
		if got := Duration(d).String(); got != want {
			t.Errorf("Duration(%v).String() = %q, want %q", d, got, want)
		}
	}
	for _, in := range []string{"", "soon", "1e300", "NaN", "5 parsecs"} {
		if d, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", in, d)
		}
	}
}

func TestNormalizeGoSpec(t *testing.T) {
	// A Spec built in Go is checked as a file is, with the field named.
	s := &Spec{Mix: Mix{"copy": 1}}
	if err := s.Normalize(); err == nil || err.Error() != `mix: unknown operation "copy" (want get, put, delete, head, list)` {
		t.Errorf("Normalize() = %v", err)
	}
	s = &Spec{Mix: Mix{OpGet: 1}, Stages: []Stage{{Name: "x", Size: &SizeDist{Constant: -1}}}}
	if err := s.Normalize(); err == nil || err.Error() != `stage "x": size: must be between 0 and 5GiB, got -1` {
		t.Errorf("Normalize() = %v", err)
	}
	s = &Spec{Mix: Mix{OpPut: 1}}
	if err := s.Normalize(); err != nil {
		t.Fatal(err)
	}
	if err := s.Normalize(); err != nil { // again: idempotent
		t.Fatal(err)
	}
	if st := s.Resolved(); len(st) != 1 || !reflect.DeepEqual(st[0].Size, ConstantSize(0)) || st[0].Duration != 30*time.Second {
		t.Errorf("Resolved() = %+v", st)
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, name := range BuiltinNames() {
		s, _ := Builtin(name)
		data, err := s.YAML()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("mix: {get: 1}\nsize: {histogram: [{size: 1, weight: 1}]}\nkeys: {kind: zipf, s: 2}"))
	f.Add([]byte("a: &a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("f.yaml", data)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "f.yaml") || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("error is not one line naming the file: %q", msg)
			}
			return
		}
		// Whatever parses must resolve, print and parse back to the same stages.
		out, err := s.YAML()
		if err != nil {
			t.Fatalf("YAML: %v", err)
		}
		back, err := Parse("back.yaml", out)
		if err != nil {
			t.Fatalf("YAML output does not parse: %v\n%s", err, out)
		}
		if got, want := back.Resolved(), s.Resolved(); !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip changed the stages:\n got  %+v\n want %+v\n%s", got, want, out)
		}
	})
}

// Samplers: names and intervals are filled in, and a sampler without a command, with an
// interval under 100ms or with another's name is refused, naming it.
func TestSamplers(t *testing.T) {
	s, err := Parse("w.yaml", []byte("mix: {get: 1}\nsamplers:\n  - {command: 'echo 1'}\n  - {name: proxies, command: 'echo 2', every: 500ms}"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Samplers) != 2 || s.Samplers[0].Name != "sampler-1" || s.Samplers[0].Every.D() != time.Second ||
		s.Samplers[1].Name != "proxies" || s.Samplers[1].Every.D() != 500*time.Millisecond {
		t.Errorf("samplers %+v", s.Samplers)
	}
	for _, c := range []struct{ doc, want string }{
		{"mix: {get: 1}\nsamplers: [{name: a}]", "command: missing"},
		{"mix: {get: 1}\nsamplers: [{command: x, every: 10ms}]", "every: must be at least 100ms"},
		{"mix: {get: 1}\nsamplers: [{name: a, command: x}, {name: a, command: y}]", `"a" is also the name of sampler 1`},
		{"mix: {get: 1}\nsamplers: [{command: x, evry: 1s}]", `unknown field "evry"`},
	} {
		if _, err := Parse("w.yaml", []byte(c.doc)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error with %q", c.doc, err, c.want)
		}
	}
}

// A harness's (or --skip-prepare's) decision not to prepopulate holds through a later Apply,
// although a mix that reads would have Normalize prepopulate by default.
func TestSetPrepopulateHolds(t *testing.T) {
	s, err := Parse("w.yaml", []byte("mix: {get: 9, put: 1}\nobjects: 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Resolved(); st[0].Kind != StagePrepare {
		t.Fatalf("a reading mix: stages %+v, want a prepare first", st)
	}
	s.SetPrepopulate(false)
	if err := s.Apply(Overrides{Concurrency: 3}); err != nil {
		t.Fatal(err)
	}
	for _, st := range s.Resolved() {
		if st.Kind == StagePrepare {
			t.Errorf("prepopulation turned off, yet stages %+v", s.Resolved())
		}
	}
}
