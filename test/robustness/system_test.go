package robustness

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
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
	endpoints       []string
	root            *s3.Client
	access, secret  string
}

// startCluster is 4 storage processes and 2 proxies with 3 replicas, each storage node behind
// a relay the nemesis can cut and slow.
func startCluster(t *testing.T) *system {
	// CAIRN_ROBUSTNESS_ARGS: more flags for every node (e.g. "--read-leases
	// --replication-interval 2s").
	c, root := e2e.StartCluster(t, localcluster.Config{Storage: 4, Proxies: 2, Replicas: 3, Links: true, Args: strings.Fields(os.Getenv("CAIRN_ROBUSTNESS_ARGS"))})
	sys := &system{root: root, links: true}
	sys.access, sys.secret = c.RootKey()
	for _, n := range c.Storage() {
		sys.storage = append(sys.storage, n)
	}
	for _, n := range c.Front() {
		sys.fronts = append(sys.fronts, n)
		sys.endpoints = append(sys.endpoints, n.Endpoint())
	}
	return sys
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
