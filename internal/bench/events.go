package bench

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/cairn-store/cairn/internal/bench/workload"
)

// eventRun is one command run at a set time during a stage: stop a node, fill a disk, add a
// node. The bench only runs it and measures the store around it; what it does is the
// operator's.
type eventRun struct {
	ev workload.Event

	mu       sync.Mutex
	cancel   context.CancelFunc // of the wait before the command starts
	ran      bool
	at       time.Duration // since the stage start, as run
	elapsed  time.Duration
	exitCode int
	errText  string
	output   []byte
}

// run waits until the event's time and runs its command with /bin/sh -c, bounded by its
// timeout, with CAIRN_BENCH_STAGE, CAIRN_BENCH_EVENT and CAIRN_BENCH_ENDPOINT set.
func (e *eventRun) run(ctx context.Context, stageStart time.Time, env []string, stage, endpoint string) {
	wctx, cancel := context.WithCancel(ctx)
	e.mu.Lock()
	e.cancel = cancel
	e.mu.Unlock()
	defer cancel()
	t := time.NewTimer(time.Until(stageStart.Add(e.ev.At.D())))
	defer t.Stop()
	select {
	case <-wctx.Done():
		return
	case <-t.C:
	}
	e.mu.Lock()
	e.ran, e.cancel = true, nil
	e.mu.Unlock()

	timeout := e.ev.Timeout.D()
	if timeout <= 0 {
		timeout = time.Minute
	}
	cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer ccancel()
	cmd := exec.CommandContext(cctx, "/bin/sh", "-c", e.ev.Command)
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "CAIRN_BENCH_STAGE="+stage, "CAIRN_BENCH_EVENT="+e.ev.Name, "CAIRN_BENCH_ENDPOINT="+endpoint)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	err := cmd.Run()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.at, e.elapsed = t0.Sub(stageStart), time.Since(t0)
	e.output = tail(out.Bytes(), 4<<10)
	var ee *exec.ExitError
	switch {
	case cctx.Err() != nil:
		e.exitCode, e.errText = -1, "timed out after "+timeout.String()
	case errors.As(err, &ee):
		e.exitCode = ee.ExitCode()
	case err != nil:
		e.exitCode, e.errText = -1, err.Error()
	}
}

// cancelIfPending drops the event if the stage ended before its time came.
func (e *eventRun) cancelIfPending() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.ran && e.cancel != nil {
		e.cancel()
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return append([]byte(nil), b...)
}

// report places the event on the stage's per-second series: the phases before, during (until
// throughput is back at 90% of before for three seconds in a row) and after, and the dip.
func (e *eventRun) report(samples []Sample) (EventReport, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.ran {
		return EventReport{}, false
	}
	at := e.at.Seconds()
	r := EventReport{Name: e.ev.Name, Command: e.ev.Command, At: round3(at), Elapsed: round3(e.elapsed.Seconds()),
		ExitCode: e.exitCode, Error: e.errText, Output: string(e.output)}
	var before, during, after []Sample
	recovered := -1
	for i, s := range samples {
		switch {
		case s.T <= at:
			before = append(before, s)
		case recovered < 0:
			during = append(during, s)
		default:
			after = append(after, s)
		}
		// Recovery is judged once the event's command has finished (a slow command is still
		// the event) and needs three good seconds in a row.
		if recovered < 0 && s.T > at && s.T >= at+e.elapsed.Seconds() && i >= 2 && len(during) >= 3 {
			r.Before = phaseOf(before)
			ok := r.Before.OpsPerSec > 0
			for _, p := range samples[i-2 : i+1] {
				ok = ok && p.T > at && p.OpsPerSec >= 0.9*r.Before.OpsPerSec
			}
			if ok {
				recovered = i
				// The three good seconds count as after the event: recovery ended before them.
				after = append(after, during[len(during)-3:]...)
				during = during[:len(during)-3]
				rec := round3(samples[i-2].T - 1 - at)
				r.RecoveredAfter = &rec
			}
		}
	}
	r.Before, r.During, r.After = phaseOf(before), phaseOf(during), phaseOf(after)
	if r.Before.OpsPerSec > 0 && len(during) > 0 {
		worst := during[0].OpsPerSec
		for _, s := range during {
			worst = min(worst, s.OpsPerSec)
		}
		r.Dip = round3(max(0, 100*(1-worst/r.Before.OpsPerSec)))
	}
	return r, true
}

func phaseOf(ss []Sample) Phase {
	var p Phase
	prevT := 0.0
	if len(ss) > 0 {
		prevT = ss[0].T - 1
	}
	for _, s := range ss {
		p.Operations += s.Operations
		p.Errors += s.Errors
	}
	if len(ss) > 0 {
		p.Seconds = round3(ss[len(ss)-1].T - prevT)
	}
	if p.Seconds > 0 {
		p.OpsPerSec = round3(float64(p.Operations) / p.Seconds)
	}
	return p
}
