package robustness

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cairn-store/cairn/internal/localcluster"
	"github.com/cairn-store/cairn/test/e2e"
)

// proc is one process of the system under test, as the nemesis handles it.
type proc interface {
	Endpoint() string
	Kill()
	Start(ctx context.Context) error
	Signal(sig os.Signal) error
	Running() bool
}

// system is what a run tests: its processes (storage: those the nemesis kills, pauses and
// cuts off; fronts: proxies it kills), the S3 endpoints clients use, and the root key.
type system struct {
	storage, fronts []proc
	links           bool // storage procs are *localcluster.Node behind a Link
	// fullable is the data directory of a storage process on a file system of its own, which
	// the nemesis can fill ("" when none could be mounted).
	fullable       string
	endpoints      []string
	root           *s3.Client
	access, secret string
}

// startCluster is 4 storage processes and 2 proxies with 3 replicas, each storage node behind
// a relay the nemesis can cut and slow.
func startCluster(t *testing.T) *system {
	// The last storage node's data directory is a small file system of its own, for the
	// nemesis to fill (the others stay on the machine's disk, whose timing they keep).
	dir := t.TempDir()
	fullable := mountOwnFS(t, filepath.Join(dir, "storage4"))
	// CAIRN_ROBUSTNESS_ARGS: more flags for every node (e.g. "--read-leases
	// --replication-interval 2s").
	c, root := e2e.StartCluster(t, localcluster.Config{Dir: dir, Storage: 4, Proxies: 2, Replicas: 3, Links: true, Args: strings.Fields(os.Getenv("CAIRN_ROBUSTNESS_ARGS"))})
	sys := &system{root: root, links: true, fullable: fullable}
	sys.access, sys.secret = c.RootKey()
	for _, n := range c.Storage() {
		sys.storage = append(sys.storage, n)
	}
	if fullable != "" && !slices.ContainsFunc(c.Storage(), func(n *localcluster.Node) bool { return n.DataDir == fullable }) {
		t.Fatalf("no storage node keeps its data in %s, the file system the nemesis fills", fullable)
	}
	for _, n := range c.Front() {
		sys.fronts = append(sys.fronts, n)
		sys.endpoints = append(sys.endpoints, n.Endpoint())
	}
	return sys
}

// ownFSBytes is the size of the file system mountOwnFS mounts: room for a short run's data and
// the engine's reserve (engine.DefaultReserveBytes, 256 MiB).
const ownFSBytes = 1 << 30

// mountOwnFS mounts a tmpfs of ownFSBytes on dir (created) and unmounts it when the test ends.
// It returns dir, or "" when that cannot be done (not root, no permission to mount): the runs
// then leave the "full" fault out.
func mountOwnFS(t *testing.T, dir string) string {
	if os.Geteuid() != 0 {
		t.Logf("no full-device fault: mounting a file system for it needs root")
		return ""
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", ownFSBytes), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Logf("no full-device fault: cannot mount a tmpfs on %s: %v %s", dir, err, strings.TrimSpace(string(out)))
		return ""
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fillerLeaves is what fill leaves free: below the engine's reserve (256 MiB), so that the
// node refuses writes there as a full device's (507), and enough for its index's own work.
const fillerLeaves = 128 << 20

// freeBytes is the space left for unprivileged use on dir's file system.
func freeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return int64(st.Bavail) * st.Bsize, nil
}

// fill takes all but fillerLeaves of the free space of dir's file system, in one file, and
// returns what gives it back.
func fill(dir string) (free func() error, err error) {
	avail, err := freeBytes(dir)
	if err != nil {
		return nil, err
	}
	size := avail - fillerLeaves
	path := filepath.Join(dir, "nemesis-filler")
	free = func() error { return os.Remove(path) }
	if size <= 0 {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, size); err != nil {
		free()
		return nil, fmt.Errorf("fallocate %d bytes in %s: %w", size, dir, err)
	}
	return free, nil
}

// startEmbedded is the embedded default: one process. It is the nemesis's "storage" process
// (killed with SIGKILL and restarted on its data, paused), and it comes back on the same port.
func startEmbedded(t *testing.T) *system {
	e := &embedded{t: t, dir: t.TempDir(), access: "CAIRN" + strings.ToUpper(e2e.RandomKey(8)), secret: e2e.RandomKey(20)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = ln.Addr().String()
	ln.Close()
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &system{storage: []proc{e}, endpoints: []string{e.Endpoint()}, root: e.s.S3Client(e2e.NoRetries),
		access: e.access, secret: e.secret}
}

// embedded is the one process of the embedded default, restartable on its address.
type embedded struct {
	t              *testing.T
	dir, addr      string
	access, secret string
	s              *e2e.Server
}

func (e *embedded) Endpoint() string { return "http://" + e.addr }

func (e *embedded) Start(context.Context) error {
	e.s = e2e.Start(e.t, e2e.Options{DataDir: e.dir, AccessKey: e.access, SecretKey: e.secret,
		Args: []string{"--listen", e.addr}})
	if e.s.Endpoint != e.Endpoint() {
		return fmt.Errorf("the server came back on %s, not %s", e.s.Endpoint, e.Endpoint())
	}
	return nil
}

func (e *embedded) Kill()                      { e.s.Kill() }
func (e *embedded) Signal(sig os.Signal) error { return e.s.Signal(sig) }
func (e *embedded) Running() bool              { return !e.s.Exited() }
