// Package workload owns what a benchmark does, as data: the workload file `cairn bench` reads
// (YAML, decoded strictly), the command-line overrides of it, the built-in workloads (MOS A–D
// and the Swift benchmark's four), and the pieces a runner draws from on every request: object
// sizes, the operation mix and the choice of key. It does no I/O but reading the file; the
// runner in package bench executes the stages Spec.Resolved returns, without any inheritance
// logic of its own.
package workload

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Defaults of a Spec, filled in by Normalize.
const (
	DefaultBuckets      = 1
	DefaultBucketPrefix = "cairn-bench"
	DefaultObjects      = 1000
	DefaultConcurrency  = 16
	DefaultDuration     = 30 * time.Second
	// DefaultSize is the object size of a workload file that gives none: the size `cairn bench
	// fill` and `run` default to. (A Spec built in Go has the size it is given; 0 is valid.)
	DefaultSize         = 4 << 10
	DefaultEventTimeout = 60 * time.Second
	DefaultSamplerEvery = time.Second
	MaxConcurrency      = 10000
	MaxBuckets          = 10000
)

// Spec is one workload: Spec-level fields are the defaults of every stage, and Stages, when
// given, is the sequence to run (COSBench's workstages). Without stages the run is a prepare
// stage (when Prepopulate), one main stage, and a cleanup stage (when Cleanup).
type Spec struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description,omitempty"`
	// Buckets holds the key space: key i lives in bucket i mod Buckets. Default 1.
	Buckets int `yaml:"buckets"`
	// BucketPrefix names the buckets (see BucketNames). Default "cairn-bench".
	BucketPrefix string `yaml:"bucket_prefix"`
	// Objects is the size of the object key space across all buckets. Default 1000.
	Objects int64 `yaml:"objects"`
	// Size is the object size distribution (default 4KiB when a file omits it).
	Size SizeDist `yaml:"size"`
	// Mix is the operation mix of main and ramp stages that do not give their own.
	Mix  Mix     `yaml:"mix,omitempty"`
	Keys KeyDist `yaml:"keys"` // default uniform
	// Concurrency is the number of workers (each one request at a time). Default 16.
	Concurrency int `yaml:"concurrency"`
	// Rate is the target operations per second of an open-loop run; 0 is closed loop (each
	// worker sends its next request when the last one answers).
	Rate float64 `yaml:"rate,omitempty"`
	// Duration is how long a main stage runs; default 30s unless Operations is set.
	Duration Duration `yaml:"duration,omitempty"`
	// Operations stops a main stage after this many operations (0: use Duration). A Spec or
	// stage sets one of Duration and Operations, not both.
	Operations int64 `yaml:"operations,omitempty"`
	// Prepopulate writes the whole key space before the first stage, unless a prepare stage is
	// listed. Default: true when some mix has get, head or delete.
	Prepopulate *bool `yaml:"prepopulate,omitempty"`
	// Cleanup deletes the objects (and the buckets the run created) at the end, unless a cleanup
	// stage is listed; listing one sets it.
	Cleanup bool    `yaml:"cleanup,omitempty"`
	Stages  []Stage `yaml:"stages,omitempty"`
	// Samplers run during the whole run, each recording a number over time beside the
	// stages (a microstore's proxies, a queue's depth).
	Samplers []Sampler `yaml:"samplers,omitempty"`

	// prepopDefaulted remembers that Prepopulate was filled in by Normalize rather than given,
	// so that a later Apply changing the mix recomputes it.
	prepopDefaulted bool
}

// SetPrepopulate decides whether a prepare stage writes every key first, whatever the mix: a
// harness's choice, which Normalize then keeps (setting the field alone on a normalized spec,
// whose value Normalize filled in, would be recomputed from the mix).
func (s *Spec) SetPrepopulate(v bool) { s.Prepopulate, s.prepopDefaulted = &v, false }

// StageKind is what a stage does.
type StageKind string

// Stage kinds. A prepare stage PUTs every key once (Objects operations, sequential keys, no
// duration); a cleanup stage DELETEs every key once the same way (some may already be gone);
// a main stage runs the mix for Duration or Operations; a ramp stage runs the mix at rising
// concurrency, one Ramp.StepDuration per level, until throughput stops rising; an idle stage
// sends nothing for its Duration, so that one of several workloads started together can wait
// while the others run (a timeline in which tenants come and go) and their stages stay aligned.
const (
	StagePrepare StageKind = "prepare"
	StageMain    StageKind = "main"
	StageCleanup StageKind = "cleanup"
	StageRamp    StageKind = "ramp"
	StageIdle    StageKind = "idle"
)

// Stage is one step of a workload. Zero fields inherit the Spec's values.
type Stage struct {
	Name string    `yaml:"name"` // default "stage-1", "stage-2", …
	Kind StageKind `yaml:"kind"` // default main

	Size        *SizeDist `yaml:"size,omitempty"`
	Mix         *Mix      `yaml:"mix,omitempty"`
	Keys        *KeyDist  `yaml:"keys,omitempty"`
	Concurrency int       `yaml:"concurrency,omitempty"`
	Rate        float64   `yaml:"rate,omitempty"`
	Duration    Duration  `yaml:"duration,omitempty"`
	Operations  int64     `yaml:"operations,omitempty"`
	Ramp        *Ramp     `yaml:"ramp,omitempty"` // required when Kind is ramp, and only then
	Events      []Event   `yaml:"events,omitempty"`
}

// Ramp raises concurrency step by step to find the knee: where throughput stops rising and
// latency bends upward.
type Ramp struct {
	Start int `yaml:"start"` // first concurrency, default 1
	Step  int `yaml:"step"`  // added each step; 0 doubles instead (1, 2, 4, 8, …)
	// Max is the highest concurrency tried (the last step runs at Max even when doubling skips
	// past it). Default 256, or Start if larger.
	Max          int      `yaml:"max"`
	StepDuration Duration `yaml:"step_duration"` // default 10s
	// The ramp stops when Patience consecutive steps (default 2) each gain less than MinGain
	// (default 0.05 = 5%) in throughput over the best step so far, or when a step's p99 latency
	// exceeds LatencyFactor (default 3) times the first step's.
	MinGain       float64 `yaml:"min_gain"`
	Patience      int     `yaml:"patience"`
	LatencyFactor float64 `yaml:"latency_factor"`
}

// Levels is the concurrency of each step, Start to Max.
func (r Ramp) Levels() []int {
	if r.Start < 1 || r.Max < r.Start {
		return nil
	}
	var out []int
	for c := r.Start; c < r.Max; {
		out = append(out, c)
		next := c * 2
		if r.Step > 0 {
			next = c + r.Step
		}
		if next <= c { // overflow
			break
		}
		c = next
	}
	return append(out, r.Max)
}

// numLevels is len(Levels()) without building the slice.
func (r Ramp) numLevels() int {
	if r.Start < 1 || r.Max < r.Start {
		return 0
	}
	n := 1
	for c := r.Start; c < r.Max; {
		n++
		next := c * 2
		if r.Step > 0 {
			next = c + r.Step
		}
		if next <= c {
			break
		}
		c = next
	}
	return n
}

// MaxDuration is the length of the ramp if it never stops early (saturating rather than
// overflowing).
func (r Ramp) MaxDuration() time.Duration {
	n, step := time.Duration(r.numLevels()), r.StepDuration.D()
	if n > 0 && step > math.MaxInt64/n {
		return math.MaxInt64
	}
	return n * step
}

// Event runs a command at a set time into its stage, for failure scenarios: stop a node,
// fill a disk, add a node.
type Event struct {
	Name    string   `yaml:"name"`              // default "event-1", "event-2", …
	At      Duration `yaml:"at,omitempty"`      // offset from the stage's start
	Command string   `yaml:"command"`           // run with /bin/sh -c
	Timeout Duration `yaml:"timeout,omitempty"` // default 60s
}

// Sampler is a command the bench runs every Every while the workload runs, recording the number
// its output starts with: the report charts it over the run, the stages marked, so that what
// the store did (a resource manager's allocation, say) shows beside the load and its latency.
type Sampler struct {
	Name    string   `yaml:"name"`
	Command string   `yaml:"command"`         // run with /bin/sh -c
	Every   Duration `yaml:"every,omitempty"` // default 1s, at least 100ms
}

// BucketNames is the buckets of the key space: BucketPrefix alone for one bucket, else
// BucketPrefix-0 … BucketPrefix-(Buckets-1).
func (s *Spec) BucketNames() []string {
	if s.Buckets <= 1 {
		return []string{s.BucketPrefix}
	}
	out := make([]string, s.Buckets)
	for i := range out {
		out[i] = s.BucketPrefix + "-" + strconv.Itoa(i)
	}
	return out
}

// ResolvedStage is a stage with every value in effect: nothing left to inherit or default.
//
// Prepare and cleanup stages have Mix {put: 1} or {delete: 1}, sequential Keys and Operations
// = Objects. Main stages have exactly one of Duration and Operations. Ramp stages have Ramp
// with its defaults filled in, Concurrency = Ramp.Start, Rate 0 (a ramp is closed loop) and no
// Duration or Operations: their length comes from Ramp. Values are copies; changing them does
// not change the Spec.
type ResolvedStage struct {
	Name        string
	Kind        StageKind
	Size        SizeDist
	Mix         Mix
	Keys        KeyDist
	Concurrency int
	Rate        float64
	Duration    time.Duration
	Operations  int64
	Ramp        *Ramp
	Events      []Event
}

// Resolved is the stages to run, in order, with their effective values. Call it after
// Normalize (or Load, Parse, Builtin, Apply, which normalize).
func (s *Spec) Resolved() []ResolvedStage {
	plan := s.plan()
	out := make([]ResolvedStage, len(plan))
	for i, p := range plan {
		out[i] = s.resolve(&p.Stage)
	}
	return out
}

// plannedStage is a stage of the run: one of s.Stages (index ≥ 0) or one synthesized from
// Prepopulate and Cleanup (index -1).
type plannedStage struct {
	Stage
	index int
}

func (s *Spec) prepopulate() bool {
	if s.Prepopulate != nil {
		return *s.Prepopulate
	}
	return s.needsData()
}

// needsData reports whether some mix reads or removes objects, or a prepare stage is listed.
func (s *Spec) needsData() bool {
	if s.Mix.needsData() {
		return true
	}
	for _, st := range s.Stages {
		if st.Kind == StagePrepare || st.Mix != nil && st.Mix.needsData() {
			return true
		}
	}
	return false
}

func (s *Spec) plan() []plannedStage {
	taken := map[string]bool{}
	var hasPrepare, hasCleanup bool
	for _, st := range s.Stages {
		taken[st.Name] = true
		hasPrepare = hasPrepare || st.Kind == StagePrepare
		hasCleanup = hasCleanup || st.Kind == StageCleanup
	}
	unique := func(base string) string {
		name := base
		for i := 2; taken[name]; i++ {
			name = base + "-" + strconv.Itoa(i)
		}
		taken[name] = true
		return name
	}
	var out []plannedStage
	if s.prepopulate() && !hasPrepare {
		out = append(out, plannedStage{Stage{Name: unique("prepare"), Kind: StagePrepare}, -1})
	}
	if len(s.Stages) == 0 {
		out = append(out, plannedStage{Stage{Name: unique("main"), Kind: StageMain}, -1})
	}
	for i, st := range s.Stages {
		out = append(out, plannedStage{st, i})
	}
	if s.Cleanup && !hasCleanup {
		out = append(out, plannedStage{Stage{Name: unique("cleanup"), Kind: StageCleanup}, -1})
	}
	return out
}

func (s *Spec) resolve(st *Stage) ResolvedStage {
	r := ResolvedStage{
		Name:        st.Name,
		Kind:        st.Kind,
		Size:        s.Size.clone(),
		Keys:        s.Keys,
		Concurrency: s.Concurrency,
		Events:      append([]Event(nil), st.Events...),
	}
	if st.Size != nil {
		r.Size = st.Size.clone()
	}
	if st.Concurrency != 0 {
		r.Concurrency = st.Concurrency
	}
	mix := s.Mix
	if st.Mix != nil {
		mix = *st.Mix
	}
	if st.Keys != nil {
		r.Keys = *st.Keys
	}
	switch st.Kind {
	case StagePrepare, StageCleanup:
		r.Mix = Mix{OpPut: 1}
		if st.Kind == StageCleanup {
			r.Mix = Mix{OpDelete: 1}
		}
		r.Keys = KeyDist{Kind: KeysSequential}
		r.Operations = s.Objects
		r.Rate = st.Rate
	case StageIdle:
		r.Duration, r.Concurrency = st.Duration.D(), 0
	case StageRamp:
		r.Mix = mix.clone()
		rp := Ramp{}
		if st.Ramp != nil {
			rp = *st.Ramp
		}
		rp.fillDefaults()
		r.Ramp = &rp
		r.Concurrency = rp.Start
	default:
		r.Mix = mix.clone()
		r.Rate = s.Rate
		if st.Rate != 0 {
			r.Rate = st.Rate
		}
		r.Duration, r.Operations = s.Duration.D(), s.Operations
		if st.Duration != 0 || st.Operations != 0 {
			r.Duration, r.Operations = st.Duration.D(), st.Operations
		}
	}
	return r
}

// Overrides are command-line flags that override a workload. Zero fields override nothing.
type Overrides struct {
	Duration     time.Duration
	Operations   int64
	Concurrency  int
	Rate         float64
	Objects      int64
	Buckets      int
	Size         *SizeDist
	Mix          Mix
	Keys         *KeyDist
	BucketPrefix string
}

// Apply overrides the workload with flags, then normalizes it again. A flag is the user's
// last word: it replaces the Spec-level value and also every explicit value of a stage that
// measures, so `--concurrency 64` means 64 even where the file set a stage's concurrency.
// Precisely: Duration/Operations (which replace each other), Concurrency and Rate apply to
// main stages; Mix and Keys to main and ramp stages; Size to every stage that sets one
// (prepare too, so that a main stage reads objects of the size asked for). Prepare and cleanup
// stages keep their own concurrency and rate, which are about setting up, not measuring.
func (s *Spec) Apply(o Overrides) error {
	if o.Duration != 0 && o.Operations != 0 {
		return errAt([]string{"operations"}, "set a duration or a number of operations, not both")
	}
	if o.Duration != 0 {
		s.Duration, s.Operations = Duration(o.Duration), 0
	}
	if o.Operations != 0 {
		s.Duration, s.Operations = 0, o.Operations
	}
	if o.Concurrency != 0 {
		s.Concurrency = o.Concurrency
	}
	if o.Rate != 0 {
		s.Rate = o.Rate
	}
	if o.Objects != 0 {
		s.Objects = o.Objects
	}
	if o.Buckets != 0 {
		s.Buckets = o.Buckets
	}
	if o.BucketPrefix != "" {
		s.BucketPrefix = o.BucketPrefix
	}
	if o.Size != nil {
		s.Size = o.Size.clone()
	}
	if o.Mix != nil {
		s.Mix = o.Mix.clone()
	}
	if o.Keys != nil {
		s.Keys = *o.Keys
	}
	for i := range s.Stages {
		st := &s.Stages[i]
		main := st.Kind == StageMain || st.Kind == ""
		if main {
			if o.Duration != 0 && (st.Duration != 0 || st.Operations != 0) {
				st.Duration, st.Operations = Duration(o.Duration), 0
			}
			if o.Operations != 0 && (st.Duration != 0 || st.Operations != 0) {
				st.Duration, st.Operations = 0, o.Operations
			}
			if o.Concurrency != 0 && st.Concurrency != 0 {
				st.Concurrency = o.Concurrency
			}
			if o.Rate != 0 && st.Rate != 0 {
				st.Rate = o.Rate
			}
		}
		if o.Size != nil && st.Size != nil {
			sz := o.Size.clone()
			st.Size = &sz
		}
		if main || st.Kind == StageRamp {
			if o.Mix != nil && st.Mix != nil {
				m := o.Mix.clone()
				st.Mix = &m
			}
			if o.Keys != nil && st.Keys != nil {
				k := *o.Keys
				st.Keys = &k
			}
		}
	}
	if err := s.Normalize(); err != nil {
		return fmt.Errorf("with the command-line flags: %w", err)
	}
	return nil
}
