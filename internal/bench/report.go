package bench

// The report of a workload run (`cairn bench run --workload`): per stage and per operation,
// with a per-second time series, the ramp curve and what happened around each fault event.
// The names here are an interface: scripts read them (docs/bench.md documents them), so
// extend, never rename.

// StageReport is the result of one stage of a workload.
type StageReport struct {
	Name        string  `json:"name"`
	Kind        string  `json:"kind"`                  // prepare, main, ramp, idle, cleanup
	Concurrency int     `json:"concurrency"`           // workers (for a ramp, the last step's)
	TargetRate  float64 `json:"target_rate,omitempty"` // open loop: the requested ops/s
	// Start is the stage's start in seconds since the run began; Seconds its length.
	Start   float64 `json:"start"`
	Seconds float64 `json:"seconds"`
	// Ops has one entry per operation kind (get, put, delete, head, list); Total sums them
	// (its latency histogram merges every kind).
	Ops   map[string]*OpStats `json:"ops"`
	Total OpStats             `json:"total"`
	// Late counts open-loop requests that started more than 1 ms after their scheduled time
	// because every worker was busy: the load the store could not absorb. Their latency is
	// measured from the scheduled time, so that waiting is not hidden (coordinated omission).
	Late int64 `json:"late,omitempty"`
	// NoKey counts operations skipped because no object was in a suitable state (a GET when
	// every object is deleted or being rewritten).
	NoKey     int64         `json:"no_key,omitempty"`
	Series    []Sample      `json:"series"`
	Ramp      *RampReport   `json:"ramp,omitempty"`
	Events    []EventReport `json:"events,omitempty"`
	ClientCPU CPU           `json:"client_cpu"`
	// Interrupted is set when the run was stopped (Ctrl-C) during this stage.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Sample is one second of a stage: the operations that completed in it.
type Sample struct {
	T           float64          `json:"t"` // end of the second, in seconds since the stage began
	Concurrency int              `json:"concurrency"`
	Operations  int64            `json:"operations"`
	Errors      int64            `json:"errors"`
	OpsPerSec   float64          `json:"ops_per_sec"`
	MBPerSec    float64          `json:"mb_per_sec"`
	P50         float64          `json:"p50_ms"`
	P99         float64          `json:"p99_ms"`
	ByOp        map[string]int64 `json:"by_op,omitempty"` // successful operations per kind
}

// RampReport is the curve of a ramp stage: one point per concurrency step, and the knee.
type RampReport struct {
	Steps []RampStep `json:"steps"`
	// Knee is the step with the smallest concurrency whose throughput is within MinGain of the
	// best seen: more clients than this only add latency.
	Knee       RampStep `json:"knee"`
	StopReason string   `json:"stop_reason"` // "throughput stopped rising", "latency bent", "reached max"
}

// RampStep is one step of a ramp.
type RampStep struct {
	Concurrency int     `json:"concurrency"`
	Seconds     float64 `json:"seconds"`
	Operations  int64   `json:"operations"`
	Errors      int64   `json:"errors"`
	OpsPerSec   float64 `json:"ops_per_sec"`
	MBPerSec    float64 `json:"mb_per_sec"`
	Latency     Latency `json:"latency_ms"`
}

// EventReport is one command run at a set time during a stage (stop a node, fill a disk, add
// a node) and the throughput around it.
type EventReport struct {
	Name     string  `json:"name"`
	Command  string  `json:"command"`
	At       float64 `json:"at"`      // seconds since the stage began, as run
	Elapsed  float64 `json:"elapsed"` // how long the command ran
	ExitCode int     `json:"exit_code"`
	Error    string  `json:"error,omitempty"`  // could not start, or timed out
	Output   string  `json:"output,omitempty"` // combined output, the last 4 KiB
	// Before is the stage up to the event; During from the event until throughput recovered
	// (three seconds in a row at 90% or more of Before's rate) or the stage ended; After the
	// rest of the stage.
	Before Phase `json:"before"`
	During Phase `json:"during"`
	After  Phase `json:"after"`
	// Dip is how far the worst second during the event fell below Before's rate, in percent.
	Dip float64 `json:"dip_pct"`
	// RecoveredAfter is the seconds from the event until throughput recovered; absent if it
	// did not within the stage.
	RecoveredAfter *float64 `json:"recovered_after,omitempty"`
}

// Phase is a stretch of a stage around an event.
type Phase struct {
	Seconds    float64 `json:"seconds"`
	Operations int64   `json:"operations"`
	Errors     int64   `json:"errors"`
	OpsPerSec  float64 `json:"ops_per_sec"`
}
