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
	Command string        `json:"command"`
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

// startSamplers runs each sampler's command every interval from now until the returned stop,
// which waits for them and returns what they recorded. A command runs with /bin/sh -c, bounded
// by its interval or 10 s, whichever is longer, with env added to the bench's environment.
func startSamplers(ctx context.Context, samplers []workload.Sampler, start time.Time, env []string) (stop func() []SamplerReport) {
	if len(samplers) == 0 {
		return func() []SamplerReport { return nil }
	}
	ctx, cancel := context.WithCancel(ctx)
	reports := make([]SamplerReport, len(samplers))
	var wg sync.WaitGroup
	for i, sm := range samplers {
		reports[i] = SamplerReport{Name: sm.Name, Command: sm.Command, Points: []SamplePoint{}}
		r := &reports[i]
		wg.Go(func() {
			t := time.NewTicker(sm.Every.D())
			defer t.Stop()
			for {
				v, err := sample(ctx, sm, env)
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
