package localcluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// StartTimeout bounds how long a node may take to answer /healthz.
const StartTimeout = 60 * time.Second

// Node is one process of a local cluster.
type Node struct {
	Name    string
	Role    string // storage, proxy or sumo
	Addr    string // host:port it serves on (a proxy's is known once it has started)
	DataDir string
	// Env is added to the environment of the node's next starts (the cluster's Config.Env,
	// else this process's, comes first).
	Env []string

	c      *Cluster
	listen string // a proxy's --listen (default 127.0.0.1:0; later starts reuse its address)
	// link, with Config.Links, is the relay on Addr in front of a storage node, which listens
	// on backAddr.
	link     *Link
	backAddr string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

var endpointLine = regexp.MustCompile(`^cairn: (?:S3 endpoint|storage node) http://(\S+)\s*$`)

// Endpoint is the node's URL.
func (n *Node) Endpoint() string { return "http://" + n.Addr }

// Running reports whether the node's process is alive.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done == nil {
		return false
	}
	select {
	case <-n.done:
		return false
	default:
		return true
	}
}

// args are the node's command line.
func (n *Node) args() []string {
	cfg := n.c.cfg
	listen := n.Addr
	if n.Role == "proxy" {
		listen = n.listen
		if listen == "" {
			listen = net.JoinHostPort(cfg.host(n.Name, n.Role), "0")
		}
	}
	args := []string{"server", "--role", n.Role, "--ring", n.c.RingDir, "--data", n.DataDir, "--listen", listen}
	if n.link != nil {
		args = append(args[:len(args)-1], n.backAddr, "--advertise", n.Addr)
	}
	if n.Role != "storage" {
		args = append(args, "--root-access-key", cfg.RootAccessKey, "--root-secret-key", cfg.RootSecretKey)
		if !slices.ContainsFunc(cfg.Args, func(a string) bool { return strings.HasPrefix(a, "--sse-master-key-file") }) {
			args = append(args, "--sse-master-key-file", n.c.MasterKeyFile)
		}
	}
	return append(args, cfg.Args...)
}

// Link is the relay in front of a storage node (nil without Config.Links).
func (n *Node) Link() *Link { return n.link }

// addLink puts a Link in front of a storage node when the cluster has them. The node's own
// port is never one of taken (every address of the cluster, whose links may not listen yet),
// which it joins.
func (n *Node) addLink(taken map[int]bool) error {
	if !n.c.cfg.Links || n.Role != "storage" {
		return nil
	}
	port, err := freePortBut(taken)
	if err != nil {
		return err
	}
	n.backAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	n.link, err = newLink(n.Addr, n.backAddr)
	return err
}

// Start starts the node's process (again, after Kill or Stop) and waits until it answers
// /healthz.
func (n *Node) Start(ctx context.Context) error {
	ready, err := n.launch()
	if err != nil {
		return err
	}
	return ready(ctx)
}

// launch starts the node's process and returns the wait for it to be ready, so that nodes
// that need each other to be ready (sumo nodes reading tenants from the cluster) can all be
// launched first.
func (n *Node) launch() (ready func(context.Context) error, err error) {
	if n.Running() {
		return nil, fmt.Errorf("localcluster: %s is running", n.Name)
	}
	cfg := n.c.cfg
	logFile, err := os.OpenFile(n.DataDir+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("localcluster: %s: %w", n.Name, err)
	}
	argv := append([]string{cfg.Binary}, n.args()...)
	if cfg.Wrap != nil {
		argv = cfg.Wrap(n.Name, n.Role, argv)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	env := cfg.Env
	if env == nil {
		env = os.Environ()
	}
	// The secret goes by environment, not argument, so that ps does not show it.
	cmd.Env = append(append(append([]string{}, env...), n.Env...), "CAIRN_CLUSTER_SECRET="+n.c.Secret)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logFile.Close()
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		logFile.Close()
		return nil, err
	}
	// A launcher that dies takes its nodes with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("localcluster: start %s: %w", n.Name, err)
	}
	done := make(chan struct{})
	n.mu.Lock()
	n.cmd, n.done = cmd, done
	n.mu.Unlock()
	// For scripts that stop and start nodes behind the launcher's back (a bench event that
	// kills one): the node's pid, and its command line, one argument per line.
	os.WriteFile(n.DataDir+".pid", []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600)
	os.WriteFile(n.DataDir+".args", []byte(strings.Join(append([]string{cfg.Binary}, n.args()...), "\n")+"\n"), 0o600)

	addr := make(chan string, 1)
	var outMu sync.Mutex
	var pumps sync.WaitGroup
	pump := func(r io.Reader, watch bool) {
		defer pumps.Done()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			outMu.Lock()
			fmt.Fprintln(logFile, line)
			fmt.Fprintf(cfg.Output, "%s: %s\n", n.Name, line)
			outMu.Unlock()
			if m := endpointLine.FindStringSubmatch(line); watch && m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, r)
	}
	pumps.Add(2)
	go pump(stdout, true)
	go pump(stderr, false)
	go func() {
		pumps.Wait()
		cmd.Wait()
		logFile.Close()
		close(done)
	}()

	return func(ctx context.Context) error {
		deadline := time.NewTimer(StartTimeout)
		defer deadline.Stop()
		if n.Role != "proxy" { // its address is known: the ring names it
			return n.waitHealthy(ctx, deadline.C, done)
		}
		select {
		case a := <-addr:
			n.Addr = a
			n.listen = a // a restarted proxy comes back where clients and the balancer expect it
		case <-done:
			return fmt.Errorf("localcluster: %s exited before it served (log: %s.log)", n.Name, n.DataDir)
		case <-deadline.C:
			n.Kill()
			return fmt.Errorf("localcluster: %s did not start within %v (log: %s.log)", n.Name, StartTimeout, n.DataDir)
		case <-ctx.Done():
			n.Kill()
			return ctx.Err()
		}
		return n.waitHealthy(ctx, deadline.C, done)
	}, nil
}

func (n *Node) waitHealthy(ctx context.Context, deadline <-chan time.Time, done <-chan struct{}) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := client.Get(n.Endpoint() + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-done:
			return fmt.Errorf("localcluster: %s exited while starting (log: %s.log)", n.Name, n.DataDir)
		case <-deadline:
			n.Kill()
			return fmt.Errorf("localcluster: %s: /healthz not 200 within %v", n.Name, StartTimeout)
		case <-ctx.Done():
			n.Kill()
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Kill kills the node's process with SIGKILL and waits until it is gone.
func (n *Node) Kill() {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// Signal sends the node's process a signal (SIGSTOP and SIGCONT make a node that hangs).
func (n *Node) Signal(sig os.Signal) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return errors.New("localcluster: not started")
	}
	return n.cmd.Process.Signal(sig)
}

// Stop asks the node to shut down (SIGTERM) and kills it if it has not exited within grace.
func (n *Node) Stop(grace time.Duration) error {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	default:
	}
	cmd.Process.Signal(syscall.SIGCONT) // a stopped process could not act on SIGTERM
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return nil
	case <-time.After(grace):
		n.Kill()
		return fmt.Errorf("did not exit within %v of SIGTERM", grace)
	}
}

// balancer spreads client connections over the nodes that serve clients, round robin, skipping
// a node that refuses the connection: a TCP load balancer as operators put in front of proxies.
type balancer struct {
	ln    net.Listener
	nodes []*Node

	mu   sync.Mutex
	next int
	wg   sync.WaitGroup
}

func newBalancer(listen string, nodes []*Node) (*balancer, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("localcluster: balancer: %w", err)
	}
	b := &balancer{ln: ln, nodes: nodes}
	b.wg.Add(1)
	go b.serve()
	return b, nil
}

func (b *balancer) addr() string { return b.ln.Addr().String() }

func (b *balancer) close() {
	b.ln.Close()
	b.wg.Wait()
}

func (b *balancer) serve() {
	defer b.wg.Done()
	for {
		conn, err := b.ln.Accept()
		if err != nil {
			return
		}
		go b.relay(conn)
	}
}

func (b *balancer) relay(client net.Conn) {
	defer client.Close()
	var backend net.Conn
	for range b.nodes {
		b.mu.Lock()
		n := b.nodes[b.next%len(b.nodes)]
		b.next++
		b.mu.Unlock()
		c, err := net.DialTimeout("tcp", n.Addr, 2*time.Second)
		if err == nil {
			backend = c
			break
		}
	}
	if backend == nil {
		return
	}
	defer backend.Close()
	relayBoth(client, backend, func(dst, src net.Conn) { io.Copy(dst, src) })
}

// relayBoth copies each way between a and b with copy until both directions end, closing the
// writing half of each destination when its source ends, so that the far side sees EOF.
func relayBoth(a, b net.Conn, copy func(dst, src net.Conn)) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(b, a)
	go cp(a, b)
	<-done
	<-done
}
