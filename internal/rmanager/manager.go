package rmanager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cairn-store/cairn/internal/daemon"
	"github.com/cairn-store/cairn/internal/microstore"
)

// Sources are the manager's edges: where the description is kept and changed, each proxy's
// report, and each microstore's policy's storage nodes and replicas.
type Sources struct {
	Describe func(ctx context.Context) (*microstore.Description, error)
	Change   func(ctx context.Context, change microstore.Change) (*microstore.Description, error)
	Report   func(ctx context.Context, proxy string) (Report, error)
	Policy   func(policy string) PolicyInfo
	// MicrostoreOf is a bucket's microstore ("" for none) by the description given.
	MicrostoreOf func(ctx context.Context, d *microstore.Description, account, bucket string) string
}

// ErrStale: the description changed between a plan and its moves, which wait for the next pass.
var ErrStale = errors.New("the microstores' description changed since the plan")

// DefaultInterval is the time between the manager's passes: a fraction of the workload
// monitor's window (5 minutes), so that it sees a change of load within a minute or two.
const DefaultInterval = 30 * time.Second

// reportTimeout bounds the wait for one proxy's report: one that does not answer in time is
// left out of the decision.
const reportTimeout = 5 * time.Second

// Manager runs Decide once an interval and applies its moves.
type Manager struct {
	cfg  Config
	src  Sources
	log  *slog.Logger
	loop *daemon.Loop
}

// New returns a Manager; Start runs it.
func New(cfg Config, src Sources, log *slog.Logger) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if src.Describe == nil || src.Change == nil || src.Report == nil || src.Policy == nil || src.MicrostoreOf == nil {
		return nil, fmt.Errorf("%w: every source is needed", ErrConfig)
	}
	return &Manager{cfg: cfg, src: src, log: log}, nil
}

// Plan gathers the proxies' reports and returns what the manager would do now, with the
// description it decided on.
func (m *Manager) Plan(ctx context.Context) (Plan, *microstore.Description, error) {
	d, err := m.src.Describe(ctx)
	if err != nil {
		return Plan{}, nil, fmt.Errorf("resource manager: %w", err)
	}
	in := Input{Description: d, Reports: map[string]Report{}, Policies: map[string]PolicyInfo{}}
	proxies := append([]string(nil), d.Pool...)
	for _, ms := range d.Microstores {
		proxies = append(proxies, ms.Proxies...)
		in.Policies[ms.Name] = m.src.Policy(ms.Policy)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range proxies {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, reportTimeout)
			defer cancel()
			r, err := m.src.Report(ctx, p)
			if err != nil {
				m.log.WarnContext(ctx, "resource manager: a proxy did not report its workload", "proxy", p, "err", err)
				return
			}
			r.Proxy = p
			mu.Lock()
			in.Reports[p] = r
			mu.Unlock()
		})
	}
	wg.Wait()
	in.MicrostoreOf = func(account, bucket string) string { return m.src.MicrostoreOf(ctx, d, account, bucket) }
	return Decide(m.cfg, in), d, nil
}

// Pass decides and applies the moves, as one change of the description made on the one
// decided on (ErrStale when another change came between).
func (m *Manager) Pass(ctx context.Context) (Plan, error) {
	p, d, err := m.Plan(ctx)
	if err != nil {
		return p, err
	}
	for _, n := range p.Notes {
		m.log.DebugContext(ctx, "resource manager: "+n)
	}
	if len(p.Steps) == 0 {
		return p, nil
	}
	_, err = m.src.Change(ctx, func(next *microstore.Description) error {
		if next.Generation != d.Generation {
			return ErrStale
		}
		for _, st := range p.Steps {
			if err := microstore.Move(st.Proxy, st.To)(next); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, ErrStale) {
		m.log.InfoContext(ctx, "resource manager: the description changed since the plan; the next pass decides again")
		return p, nil
	}
	if err != nil {
		return p, fmt.Errorf("resource manager: %w", err)
	}
	for _, st := range p.Steps {
		m.log.InfoContext(ctx, "resource manager: moved a proxy", "proxy", st.Proxy, "from", where(st.From), "to", where(st.To), "reason", st.Reason)
	}
	return p, nil
}

// Start runs a pass every interval, while lease is held (nil: always).
func (m *Manager) Start(interval time.Duration, lease daemon.Lease) {
	m.loop = daemon.Start(interval, false, daemon.WhileHeld(lease, func(ctx context.Context) {
		if _, err := m.Pass(ctx); err != nil && !errors.Is(err, context.Canceled) {
			m.log.WarnContext(ctx, "resource manager: pass failed", "err", err)
		}
	}))
}

// Stop ends the passes, the running one canceled.
func (m *Manager) Stop() {
	if m.loop != nil {
		m.loop.Stop()
	}
}
