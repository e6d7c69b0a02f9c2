package cluster

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/advisor"
	"github.com/cairn-store/cairn/internal/advisor/calibrate"
	"github.com/cairn-store/cairn/internal/engine"
	"github.com/cairn-store/cairn/internal/localcluster"
	"github.com/cairn-store/cairn/internal/objclient"
	"github.com/cairn-store/cairn/test/e2e"
)

// TestCalibrate runs `cairn advisor calibrate` both ways, briefly: on a cluster of its own, and
// on a cluster that runs already (as it measures OpenStack Swift's servers), whose processes
// it finds by their command lines and whose fsyncs it reads from the storage nodes' /metrics.
// Every measured class must come out with CPU on both tiers, PUTs with fsyncs.
func TestCalibrate(t *testing.T) {
	check := func(t *testing.T, what string, run func() (*advisor.Demands, error)) {
		d, err := run()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, op := range []string{"put", "get", "head", "delete"} {
			// (The delete class deletes the 20 keys once: a few ms of CPU, which /proc counts
			// in ticks of 10 ms, so it may show none.)
			ps := d.Ops[op]
			// (A write's proxy CPU may be all per replica: calibrate splits it.)
			if len(ps) != 1 || op != "delete" && (ps[0].ProxyCPUSeconds+ps[0].ProxyCPUPerVisitSeconds <= 0 || ps[0].StorageCPUSeconds <= 0) {
				t.Errorf("%s: %s points %+v, want one with CPU on both tiers", what, op, ps)
			}
		}
		if p := d.Ops["put"]; len(p) == 1 && p[0].Fsyncs <= 0 {
			t.Errorf("%s: a PUT without fsyncs: %+v", what, p[0])
		}
	}
	// Each class runs for a second (the delete class deletes its 20 keys once): what is asserted
	// holds at any rate, and on a loaded machine (load average 18 on 2 cores) the least CPU one
	// class measured was still ten ticks. The progress, logged, shows each class's operations.
	small := calibrate.Config{Storage: 2, Replicas: 2, Concurrency: 4, Duration: time.Second, Sizes: []int64{4 << 10}, Objects: 20}

	t.Run("own cluster", func(t *testing.T) {
		cfg := small
		cfg.Binary, cfg.Dir, cfg.Progress = e2e.Binary(t), filepath.Join(t.TempDir(), "c"), logWriter{t}
		// And the storage CPU again on one saturated node: the second cluster must run, and
		// its figures replace the first's.
		cfg.SaturatedStorage = true
		check(t, "own", func() (*advisor.Demands, error) {
			d, err := calibrate.Run(context.Background(), cfg)
			if err == nil && !strings.Contains(d.Source, "one saturated storage node") {
				t.Errorf("source %q does not say the storage CPU came from the one-node cluster", d.Source)
			}
			return d, err
		})
	})

	t.Run("running cluster", func(t *testing.T) {
		secret := e2e.RandomKey(20)
		c, _ := start(t, localcluster.Config{Storage: 2, Proxies: 1, Replicas: 2, RootAccessKey: "CALIBRATEROOT", RootSecretKey: secret})
		var metrics []string
		for _, n := range c.Nodes {
			if n.Role == "storage" {
				metrics = append(metrics, n.Endpoint())
			}
		}
		// Each node's command line names its data directory: DIR/proxy1, DIR/storage2.
		dir := regexp.QuoteMeta(filepath.Dir(c.Nodes[0].DataDir))
		cfg := small
		cfg.Progress = logWriter{t}
		cfg.Target = &calibrate.Target{
			Client:     objclient.Config{Endpoint: c.Endpoint, AccessKey: "CALIBRATEROOT", SecretKey: secret},
			ProxyProcs: regexp.MustCompile(dir + `/proxy\d+\b`), StorageProcs: regexp.MustCompile(dir + `/storage\d+\b`),
			Metrics: metrics, Name: "a local cluster", InlineThreshold: engine.DefaultInlineThreshold,
		}
		check(t, "running", func() (*advisor.Demands, error) {
			d, err := calibrate.Run(context.Background(), cfg)
			if err == nil && !strings.Contains(d.Source, "a local cluster") {
				t.Errorf("source %q does not name the cluster", d.Source)
			}
			return d, err
		})
	})
}

// logWriter logs each write to it (calibrate's progress, a line at a time).
type logWriter struct{ t *testing.T }

func (w logWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}
