package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cairn-store/cairn/internal/bench/workload"
)

// SamplerReport is what one sampler recorded over the run (workload.Sampler).
type SamplerReport struct {
	Name    string        `json:"name"`
	Command string        `json:"command"` // empty for a probe read in process
	Points  []SamplePoint `json:"points"`
	// Errors counts runs that failed or printed no number; LastError says why the last did.
	Errors    int    `json:"errors,omitempty"`
	LastError string `json:"last_error,omitempty"`
}

// SamplePoint is one sample: T seconds since the run began, and the number read.
type SamplePoint struct {
	T     float64 `json:"t"`
	Value float64 `json:"value"`
}

// Probe is a sampler read in process: a harness's own figure over the run (such as a resource
// manager's allocation), reported and charted as a workload's samplers are.
type Probe struct {
	Name  string
	Every time.Duration // default 1s
	Read  func(context.Context) (float64, error)
}

// startSamplers reads each sampler, and each probe, every interval from now until the
// returned stop, which waits for them and returns what they recorded. A sampler's command runs
// with /bin/sh -c, bounded by its interval or 10 s, whichever is longer, with env added to the
// bench's environment.
func startSamplers(ctx context.Context, samplers []workload.Sampler, probes []Probe, start time.Time, env []string) (stop func() []SamplerReport) {
	type reader struct {
		Probe
		command string
	}
	var all []reader
	for _, sm := range samplers {
		all = append(all, reader{Probe{Name: sm.Name, Every: sm.Every.D(), Read: func(ctx context.Context) (float64, error) {
			return sample(ctx, sm, env)
		}}, sm.Command})
	}
	for _, p := range probes {
		if p.Every <= 0 {
			p.Every = workload.DefaultSamplerEvery
		}
		all = append(all, reader{p, ""})
	}
	if len(all) == 0 {
		return func() []SamplerReport { return nil }
	}
	ctx, cancel := context.WithCancel(ctx)
	reports := make([]SamplerReport, len(all))
	var wg sync.WaitGroup
	for i, sm := range all {
		reports[i] = SamplerReport{Name: sm.Name, Command: sm.command, Points: []SamplePoint{}}
		r := &reports[i]
		wg.Go(func() {
			t := time.NewTicker(sm.Every)
			defer t.Stop()
			for {
				v, err := sm.Read(ctx)
				at := round3(time.Since(start).Seconds())
				switch {
				case ctx.Err() != nil:
					return
				case err != nil:
					r.Errors++
					r.LastError = err.Error()
				default:
					r.Points = append(r.Points, SamplePoint{T: at, Value: v})
				}
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		})
	}
	return func() []SamplerReport {
		cancel()
		wg.Wait()
		return reports
	}
}

// sample runs a sampler's command once and reads the number its output starts with.
func sample(ctx context.Context, sm workload.Sampler, env []string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, max(sm.Every.D(), 10*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", sm.Command)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", sm.Name, err)
	}
	fields := strings.Fields(string(out))
	if len(fields) == 0 {
		return 0, fmt.Errorf("%s: printed nothing", sm.Name)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return 0, fmt.Errorf("%s: output does not start with a number: %q", sm.Name, truncate(fields[0], 40))
	}
	return v, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
