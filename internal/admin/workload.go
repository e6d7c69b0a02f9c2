package admin

import (
	"context"
	"net/http"
	"runtime"
	"time"

	"github.com/cairn-store/cairn/internal/workload"
)

// Workload is GET /admin/v1/workload: what the workload monitor of the proxy that answers saw
// of each bucket over its window, and of each class together. Each proxy monitors the
// requests it serves.
type Workload struct {
	Window time.Duration `json:"window_ns"`
	// Cores is the CPU the proxy may use (its cgroup's quota, else the Go runtime's
	// GOMAXPROCS), which the resource manager counts as its capacity.
	Cores float64 `json:"cores"`
	// CPUUsed is the cores the proxy's process used over about the last 10 s (or the window,
	// when shorter), all its work together (0 when not known): what the resource manager sees
	// of a proxy held at its quota.
	CPUUsed float64               `json:"cpu_used"`
	Buckets []workload.Stats      `json:"buckets"`
	Classes []workload.ClassStats `json:"classes"`
}

func (h *Handler) workload(w http.ResponseWriter) error {
	m := h.cfg.Workload
	if m == nil {
		return errorf(http.StatusNotFound, CodeNotFound, "no workload monitor here")
	}
	cores := h.cfg.Cores
	if cores <= 0 {
		cores = float64(runtime.GOMAXPROCS(0))
	}
	out := Workload{Window: m.Window(), Cores: cores, Buckets: m.Snapshot(), Classes: m.ByClass()}
	if h.cfg.CPUUsed != nil {
		out.CPUUsed = h.cfg.CPUUsed()
	}
	if out.Buckets == nil {
		out.Buckets = []workload.Stats{}
	}
	if out.Classes == nil {
		out.Classes = []workload.ClassStats{}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// Workload returns the workload monitor's figures of the proxy that answers.
func (c *Client) Workload(ctx context.Context) (Workload, error) {
	var out Workload
	err := c.do(ctx, http.MethodGet, "workload", nil, &out)
	return out, err
}
