package e2e

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cairn-store/cairn/internal/localcluster"
)

// StartCluster runs a local cluster of real processes for the test (internal/localcluster,
// from the cairn binary), stopped when the test ends, and returns it with an S3 client of its
// root user that does not retry; the cluster's last lines of output are logged if the test
// fails.
func StartCluster(t *testing.T, cfg localcluster.Config) (*localcluster.Cluster, *s3.Client) {
	t.Helper()
	cfg.Binary = Binary(t)
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.RootAccessKey == "" {
		cfg.RootAccessKey, cfg.RootSecretKey = "CLUSTERROOT"+strings.ToUpper(RandomKey(4)), RandomKey(20)
	}
	if !slices.Contains(cfg.Args, "--log-level") {
		cfg.Args = append(cfg.Args, "--log-level", "warn")
	}
	var out bytes.Buffer
	var outMu sync.Mutex
	cfg.Output = writerFunc(func(b []byte) (int, error) {
		outMu.Lock()
		defer outMu.Unlock()
		return out.Write(b)
	})
	// Only a bound for a cluster that will never be ready: on a loaded machine its nodes may
	// take many times their usual second or two each to start.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := localcluster.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
		if t.Failed() {
			outMu.Lock()
			lines := strings.Split(out.String(), "\n")
			outMu.Unlock()
			t.Logf("cluster output, last lines:\n%s", strings.Join(lines[max(0, len(lines)-80):], "\n"))
		}
	})
	return c, NewS3Client(c.Endpoint, cfg.RootAccessKey, cfg.RootSecretKey, NoRetries)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
