package workload

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Normalize fills in the defaults and checks everything, so that a runner can trust a Spec and
// its Resolved stages without checks of its own. It may be called again after a change (Apply
// does). The error names the field, e.g. `stage "main": mix: weight for "get" must be ≥ 0 and
// finite, got -1`.
func (s *Spec) Normalize() error {
	s.fillDefaults()
	if e := s.check(); e != nil {
		e.label = renderKeys(e.keys, s.itemName)
		return e
	}
	return nil
}

func (s *Spec) fillDefaults() {
	if s.Buckets == 0 {
		s.Buckets = DefaultBuckets
	}
	if s.BucketPrefix == "" {
		s.BucketPrefix = DefaultBucketPrefix
	}
	if s.Objects == 0 {
		s.Objects = DefaultObjects
	}
	if s.Concurrency == 0 {
		s.Concurrency = DefaultConcurrency
	}
	if s.Duration == 0 && s.Operations == 0 {
		s.Duration = Duration(DefaultDuration)
	}
	s.Keys.normalize()
	for i := range s.Stages {
		st := &s.Stages[i]
		if st.Name == "" {
			st.Name = "stage-" + strconv.Itoa(i+1)
		}
		st.Kind = StageKind(strings.ToLower(strings.TrimSpace(string(st.Kind))))
		if st.Kind == "" {
			st.Kind = StageMain
		}
		if st.Keys != nil {
			st.Keys.normalize()
		}
		if st.Ramp != nil {
			st.Ramp.fillDefaults()
		}
		for j := range st.Events {
			ev := &st.Events[j]
			if ev.Name == "" {
				ev.Name = "event-" + strconv.Itoa(j+1)
			}
			if ev.Timeout == 0 {
				ev.Timeout = Duration(DefaultEventTimeout)
			}
		}
		if st.Kind == StageCleanup {
			s.Cleanup = true
		}
	}
	for i := range s.Samplers {
		sm := &s.Samplers[i]
		if sm.Name == "" {
			sm.Name = "sampler-" + strconv.Itoa(i+1)
		}
		if sm.Every == 0 {
			sm.Every = Duration(DefaultSamplerEvery)
		}
	}
	if s.Prepopulate == nil || s.prepopDefaulted {
		v := s.needsData()
		s.Prepopulate, s.prepopDefaulted = &v, true
	}
}

func (r *Ramp) fillDefaults() {
	if r.Start == 0 {
		r.Start = 1
	}
	if r.Max == 0 {
		r.Max = max(256, r.Start)
	}
	if r.StepDuration == 0 {
		r.StepDuration = Duration(10 * time.Second)
	}
	if r.MinGain == 0 {
		r.MinGain = 0.05
	}
	if r.Patience == 0 {
		r.Patience = 2
	}
	if r.LatencyFactor == 0 {
		r.LatencyFactor = 3
	}
}

// itemName is the name of the stage or event at path, for error labels.
func (s *Spec) itemName(path []string) string {
	if len(path) < 2 || path[0] != "stages" {
		return ""
	}
	i, err := strconv.Atoi(path[1])
	if err != nil || i < 0 || i >= len(s.Stages) {
		return ""
	}
	if len(path) == 2 {
		return s.Stages[i].Name
	}
	if len(path) == 4 && path[2] == "events" {
		j, err := strconv.Atoi(path[3])
		if err == nil && j >= 0 && j < len(s.Stages[i].Events) {
			return s.Stages[i].Events[j].Name
		}
	}
	return ""
}

func (s *Spec) check() *fieldError {
	if s.Buckets < 1 || s.Buckets > MaxBuckets {
		return errAt([]string{"buckets"}, "must be between 1 and %d, got %d", MaxBuckets, s.Buckets)
	}
	if e := checkBucketPrefix(s.BucketPrefix, s.Buckets); e != nil {
		return e
	}
	if s.Objects < 1 {
		return errAt([]string{"objects"}, "must be at least 1, got %d", s.Objects)
	}
	if e := s.Size.check(); e != nil {
		return e.under("size")
	}
	if s.Mix != nil {
		if e := s.Mix.check(); e != nil {
			return e.under("mix")
		}
	}
	if e := s.Keys.check(); e != nil {
		return e.under("keys")
	}
	if s.Concurrency < 1 || s.Concurrency > MaxConcurrency {
		return errAt([]string{"concurrency"}, "must be between 1 and %d, got %d", MaxConcurrency, s.Concurrency)
	}
	if !nonNegative(s.Rate) {
		return errAt([]string{"rate"}, "must be ≥ 0 operations per second (0: closed loop), got %s", formatFloat(s.Rate))
	}
	if e := checkLength(s.Duration, s.Operations); e != nil {
		return e
	}
	if len(s.Stages) == 0 && s.Mix == nil {
		return errAt([]string{"mix"}, "missing: the operation mix, e.g. {get: 90, put: 5, delete: 5}")
	}
	if !*s.Prepopulate {
		for _, st := range s.Stages {
			if st.Kind == StagePrepare {
				return errAt([]string{"prepopulate"}, "false, but stage %q is a prepare stage", st.Name)
			}
		}
	}
	samplers := map[string]int{}
	for i, sm := range s.Samplers {
		at := func(field string) []string { return []string{"samplers", strconv.Itoa(i), field} }
		if j, dup := samplers[sm.Name]; dup {
			return errAt(at("name"), "%q is also the name of sampler %d; sampler names must be unique", sm.Name, j+1)
		}
		samplers[sm.Name] = i
		if strings.TrimSpace(sm.Command) == "" {
			return errAt(at("command"), "missing: the command whose output's first number is sampled")
		}
		if sm.Every.D() < 100*time.Millisecond {
			return errAt(at("every"), "must be at least 100ms, got %s", sm.Every)
		}
	}
	names := map[string]int{}
	for i := range s.Stages {
		name := s.Stages[i].Name
		if j, dup := names[name]; dup {
			return errAt([]string{"stages", strconv.Itoa(i), "name"}, "%q is also the name of stage %d; stage names must be unique", name, j+1)
		}
		names[name] = i
		if e := s.checkStage(i); e != nil {
			return e.under("stages", strconv.Itoa(i))
		}
	}
	return nil
}

// checkBucketPrefix checks that every bucket name is a valid S3 bucket name: 3 to 63
// lowercase letters, digits, '-' and '.', starting and ending with a letter or digit.
func checkBucketPrefix(prefix string, buckets int) *fieldError {
	longest := prefix
	if buckets > 1 {
		longest += "-" + strconv.Itoa(buckets-1)
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	ok := len(prefix) >= 3 && len(longest) <= 63 && alnum(prefix[0]) && alnum(prefix[len(prefix)-1])
	for i := 0; ok && i < len(prefix); i++ {
		ok = alnum(prefix[i]) || prefix[i] == '-' || prefix[i] == '.'
	}
	if !ok {
		return errAt([]string{"bucket_prefix"}, "%q does not make valid bucket names (3–63 lowercase letters, digits, '-' and '.', "+
			"starting and ending with a letter or digit; with several buckets, the longest is %q)", prefix, longest)
	}
	return nil
}

// checkLength checks a Spec's or stage's duration and operation count.
func checkLength(d Duration, ops int64) *fieldError {
	switch {
	case d < 0:
		return errAt([]string{"duration"}, "must be ≥ 0, got %s", d)
	case ops < 0:
		return errAt([]string{"operations"}, "must be ≥ 0, got %d", ops)
	case d != 0 && ops != 0:
		return errAt([]string{"operations"}, "set duration or operations, not both")
	}
	return nil
}

// notFor is the error for a field a kind of stage has no use for.
func notFor(field string, kind StageKind, why string) *fieldError {
	return errAt([]string{field}, "not allowed in a %s stage: %s", kind, why)
}

// checkStage checks stage i, with keys relative to the stage.
func (s *Spec) checkStage(i int) *fieldError {
	st := &s.Stages[i]
	switch st.Kind {
	case StagePrepare, StageCleanup:
		what := "writes every object once (Objects PUTs, in key order)"
		if st.Kind == StageCleanup {
			what = "deletes every object once (Objects DELETEs, in key order)"
		}
		switch {
		case st.Mix != nil:
			return notFor("mix", st.Kind, "it "+what)
		case st.Keys != nil:
			return notFor("keys", st.Kind, "it "+what)
		case st.Duration != 0:
			return notFor("duration", st.Kind, "it "+what)
		case st.Operations != 0:
			return notFor("operations", st.Kind, "it "+what)
		case st.Size != nil && st.Kind == StageCleanup:
			return notFor("size", st.Kind, "it "+what)
		}
	case StageMain:
	case StageIdle:
		const why = "it sends nothing"
		for _, f := range []struct {
			name string
			set  bool
		}{{"mix", st.Mix != nil}, {"keys", st.Keys != nil}, {"size", st.Size != nil}, {"concurrency", st.Concurrency != 0},
			{"rate", st.Rate != 0}, {"operations", st.Operations != 0}} {
			if f.set {
				return notFor(f.name, st.Kind, why)
			}
		}
		if st.Duration <= 0 {
			return errAt([]string{"duration"}, "missing: an idle stage lasts its own duration, e.g. 1m")
		}
	case StageRamp:
		const why = "a ramp sets its own concurrency (ramp: start, step, max), runs closed loop, and lasts until it stops"
		switch {
		case st.Concurrency != 0:
			return notFor("concurrency", st.Kind, why)
		case st.Rate != 0:
			return notFor("rate", st.Kind, why)
		case st.Duration != 0:
			return notFor("duration", st.Kind, why+" (ramp: step_duration sets each step's length)")
		case st.Operations != 0:
			return notFor("operations", st.Kind, why)
		case st.Ramp == nil:
			return errAt([]string{"ramp"}, "missing: a ramp stage needs ramp settings, e.g. {start: 1, max: 256, step_duration: 10s}")
		}
	default:
		return errAt([]string{"kind"}, "unknown stage kind %q (want prepare, main, ramp, idle or cleanup)", st.Kind)
	}
	if st.Ramp != nil && st.Kind != StageRamp {
		return errAt([]string{"ramp"}, "only a stage of kind ramp has ramp settings")
	}
	if st.Size != nil {
		if e := st.Size.check(); e != nil {
			return e.under("size")
		}
	}
	if st.Mix != nil {
		if e := st.Mix.check(); e != nil {
			return e.under("mix")
		}
	} else if (st.Kind == StageMain || st.Kind == StageRamp) && s.Mix == nil {
		return errAt([]string{"mix"}, "missing: give the stage an operation mix, or the workload a default one")
	}
	if st.Keys != nil {
		if e := st.Keys.check(); e != nil {
			return e.under("keys")
		}
	}
	if st.Concurrency < 0 || st.Concurrency > MaxConcurrency {
		return errAt([]string{"concurrency"}, "must be between 1 and %d (or 0 to inherit), got %d", MaxConcurrency, st.Concurrency)
	}
	if !nonNegative(st.Rate) {
		return errAt([]string{"rate"}, "must be ≥ 0 operations per second, got %s", formatFloat(st.Rate))
	}
	if e := checkLength(st.Duration, st.Operations); e != nil {
		return e
	}
	if st.Ramp != nil {
		if e := st.Ramp.check(); e != nil {
			return e.under("ramp")
		}
	}
	// The stage's length, when it is known in advance, bounds its events.
	var length time.Duration
	switch st.Kind {
	case StageMain, StageIdle:
		length = s.resolve(st).Duration
	case StageRamp:
		length = st.Ramp.MaxDuration()
	}
	names := map[string]int{}
	for j, ev := range st.Events {
		if k, dup := names[ev.Name]; dup {
			return errAt([]string{"events", strconv.Itoa(j), "name"}, "%q is also the name of event %d; event names must be unique within a stage", ev.Name, k+1)
		}
		names[ev.Name] = j
		if e := ev.check(length); e != nil {
			return e.under("events", strconv.Itoa(j))
		}
	}
	return nil
}

func (r *Ramp) check() *fieldError {
	switch {
	case r.Start < 1 || r.Start > MaxConcurrency:
		return errAt([]string{"start"}, "must be between 1 and %d, got %d", MaxConcurrency, r.Start)
	case r.Max < r.Start || r.Max > MaxConcurrency:
		return errAt([]string{"max"}, "must be between start (%d) and %d, got %d", r.Start, MaxConcurrency, r.Max)
	case r.Step < 0 || r.Step > MaxConcurrency:
		return errAt([]string{"step"}, "must be between 0 (double each step) and %d, got %d", MaxConcurrency, r.Step)
	case r.StepDuration <= 0:
		return errAt([]string{"step_duration"}, "must be > 0, got %s", r.StepDuration)
	case !nonNegative(r.MinGain):
		return errAt([]string{"min_gain"}, "must be ≥ 0 (a fraction: 0.05 is 5%%), got %s", formatFloat(r.MinGain))
	case r.Patience < 1:
		return errAt([]string{"patience"}, "must be ≥ 1 step, got %d", r.Patience)
	case !(r.LatencyFactor > 1) || math.IsInf(r.LatencyFactor, 0):
		return errAt([]string{"latency_factor"}, "must be > 1 (a multiple of the first step's p99), got %s", formatFloat(r.LatencyFactor))
	}
	return nil
}

// check checks an event of a stage that lasts length (0: not known in advance).
func (ev *Event) check(length time.Duration) *fieldError {
	switch {
	case ev.At < 0:
		return errAt([]string{"at"}, "must be ≥ 0 (an offset from the stage's start), got %s", ev.At)
	case length > 0 && ev.At.D() >= length:
		return errAt([]string{"at"}, "%s is not before the end of the stage (%s)", ev.At, Duration(length))
	case strings.TrimSpace(ev.Command) == "":
		return errAt([]string{"command"}, "missing: the shell command to run (with /bin/sh -c)")
	case ev.Timeout < 0:
		return errAt([]string{"timeout"}, "must be > 0, got %s", ev.Timeout)
	}
	return nil
}
