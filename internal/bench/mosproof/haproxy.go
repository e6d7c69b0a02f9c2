package mosproof

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/localcluster"
	"github.com/cairn-store/cairn/internal/microstore"
	"github.com/cairn-store/cairn/internal/objclient"
)

// haproxy is HAProxy in front of the proxies, configured from the description.
type haproxy struct {
	cfg      Config
	dir      string
	endpoint string
	mu       sync.Mutex
	cmd      *exec.Cmd
	gen      uint64
}

func startHAProxy(ctx context.Context, cfg Config, dir string, adm *admin.Client, proxies []string) (*haproxy, error) {
	port, err := localcluster.FreePort()
	if err != nil {
		return nil, err
	}
	h := &haproxy{cfg: cfg, dir: dir, endpoint: fmt.Sprintf("127.0.0.1:%d", port)}
	if err := h.reload(ctx, adm, proxies); err != nil {
		return nil, err
	}
	if err := waitFor(ctx, time.Minute, func() bool {
		c, err := objclient.New(objclient.Config{Endpoint: "http://" + h.endpoint, AccessKey: "x", SecretKey: "y"})
		if err != nil {
			return false
		}
		defer c.Close()
		_, err = c.ListBuckets(ctx)
		var oe *objclient.Error
		return errors.As(err, &oe) // any answer of the store's: HAProxy passes requests on
	}); err != nil {
		return nil, fmt.Errorf("haproxy did not answer: %w", err)
	}
	return h, nil
}

// reload writes the configuration and its map from the description and the cluster's buckets,
// and starts HAProxy on them, the old one (if any) finishing its connections (-sf).
func (h *haproxy) reload(ctx context.Context, adm *admin.Client, proxies []string) error {
	d, err := adm.Microstores(ctx)
	if err != nil {
		return err
	}
	b, err := adm.MicrostoreBuckets(ctx)
	if err != nil {
		return err
	}
	mapFile := filepath.Join(h.dir, "haproxy-buckets.map")
	conf, m, err := d.HAProxy(microstore.HAProxyOptions{Bind: h.endpoint, Proxies: proxies, MapFile: mapFile}, b.Buckets)
	if err != nil {
		return err
	}
	cfgFile := filepath.Join(h.dir, "haproxy.cfg")
	if err := os.WriteFile(mapFile, m, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(cfgFile, conf, 0o644); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	args := []string{"-db", "-f", cfgFile}
	old := h.cmd
	if old != nil {
		args = append(args, "-sf", fmt.Sprint(old.Process.Pid))
	}
	cmd := exec.Command(h.cfg.HAProxy, args...)
	log, err := os.OpenFile(filepath.Join(h.dir, "haproxy.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting haproxy: %w", err)
	}
	go func() { cmd.Wait(); log.Close() }()
	h.cmd, h.gen = cmd, d.Generation
	return nil
}

// follow reloads HAProxy whenever the description changes (the resource manager's moves) or
// new buckets appear, until ctx ends.
func (h *haproxy) follow(ctx context.Context, adm *admin.Client, proxies []string) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
		d, err := adm.Microstores(ctx)
		h.mu.Lock()
		changed := err == nil && d.Generation != h.gen
		h.mu.Unlock()
		if changed {
			if err := h.reload(ctx, adm, proxies); err != nil {
				h.cfg.Logger.Warn("mosproof: reloading haproxy", "err", err)
			}
		}
	}
}

func (h *haproxy) client(t objclient.Config, concurrency int, location string) (objclient.Client, error) {
	t.Endpoint, t.Concurrency, t.BucketLocation = "http://"+h.endpoint, concurrency, location
	return objclient.New(t)
}

func (h *haproxy) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cmd != nil && h.cmd.Process != nil {
		h.cmd.Process.Signal(syscall.SIGTERM)
	}
}
