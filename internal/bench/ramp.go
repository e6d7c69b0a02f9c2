package bench

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/cairn-store/cairn/internal/bench/workload"
)

// runRamp raises concurrency step by step and stops when more clients stop buying throughput
// (Patience steps in a row gaining less than MinGain over the best so far), when latency bends
// (a step's p99 beyond LatencyFactor times the first step's), or at Max. It reports the curve
// and its knee: the fewest clients that reach within MinGain of the best throughput.
func runRamp(ctx context.Context, l *loop, st workload.ResolvedStage, conc *atomic.Int64, seed uint64) *RampReport {
	rp := st.Ramp
	rep := &RampReport{StopReason: "reached max"}
	var best float64
	stalled := 0
	for c, i := rp.Start, 0; ctx.Err() == nil; i++ {
		conc.Store(int64(c))
		step := newRecorder()
		l.rec.step.Store(step)
		t0 := time.Now()
		l.run(ctx, phase{concurrency: c, rate: st.Rate, stop: t0.Add(rp.StepDuration.D()), seed: seed + uint64(i)*104729})
		el := time.Since(t0)
		l.rec.step.Store(nil)
		s := step.stats(el)
		rs := RampStep{Concurrency: c, Seconds: round3(el.Seconds()), Operations: s.Operations, Errors: s.Errors,
			OpsPerSec: s.OpsPerSec, MBPerSec: s.MBPerSec, Latency: s.Latency}
		rep.Steps = append(rep.Steps, rs)
		if ctx.Err() != nil {
			rep.StopReason = "interrupted"
			break
		}
		if rs.OpsPerSec > best*(1+rp.MinGain) {
			stalled = 0
		} else {
			stalled++
		}
		best = max(best, rs.OpsPerSec)
		if stalled >= rp.Patience {
			rep.StopReason = "throughput stopped rising"
			break
		}
		if first := rep.Steps[0].Latency.P99; i > 0 && first > 0 && rs.Latency.P99 > rp.LatencyFactor*first {
			rep.StopReason = "latency bent"
			break
		}
		if c >= rp.Max {
			break
		}
		if rp.Step > 0 {
			c += rp.Step
		} else {
			c *= 2
		}
		c = min(c, rp.Max)
	}
	rep.Knee = knee(rep.Steps, rp.MinGain)
	return rep
}

// knee is the step with the fewest clients whose throughput is within minGain of the best.
func knee(steps []RampStep, minGain float64) RampStep {
	var best float64
	for _, s := range steps {
		best = max(best, s.OpsPerSec)
	}
	for _, s := range steps {
		if s.OpsPerSec >= best*(1-minGain) {
			return s
		}
	}
	return RampStep{}
}
