// Package e2e builds the real cairn binary and runs it as a child process, so that tests can talk
// to it over HTTP exactly as a user's client would. Tests in this package and in test/crash use
// it; everything here is skipped under `go test -short`.
//
// The binary is built once per test process (`go build -o $TMP/cairn ./cmd/cairn`), unless the
// environment variable CAIRN_BIN names an already built binary (scripts/test.sh does that, so the
// Go and the Python tests share one build).
package e2e

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Region is the only region Cairn serves.
const Region = "us-east-1"

// StartTimeout bounds how long a server (or a whole local cluster) may take to print its
// endpoint and answer /healthz. It only stops a server that will never be ready: a loaded
// machine may take many times the usual second or two, and must not fail the test for it.
const StartTimeout = 2 * time.Minute

// StopTimeout is how long Stop callers give a server to exit after SIGTERM before killing it.
// Like StartTimeout it only catches a server that hangs: one that waits out its own shutdown
// grace period instead of exiting at once exits non-zero, which Stop reports whatever the time.
const StopTimeout = 2 * time.Minute

var endpointLine = regexp.MustCompile(`^cairn: S3 endpoint (http://\S+)\s*$`)

var (
	buildOnce sync.Once
	buildDir  string
	buildPath string
	buildErr  error
)

// Main is meant for TestMain: it runs the tests and then removes the binary built for them.
//
//	func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	return code
}

// ClusterTopology returns the local-cluster flags of CAIRN_TEST_CLUSTER (for example
// "--storage 4 --proxies 1", or "--sumo 2"), nil when it is not set: with it, Start runs a
// whole cluster (`cairn local-cluster`, one process per node) in place of one server, so that
// the same tests prove the cluster behaves as the single node does.
func ClusterTopology() []string {
	v := strings.TrimSpace(os.Getenv("CAIRN_TEST_CLUSTER"))
	if v == "" {
		return nil
	}
	return strings.Fields(v)
}

// SkipShort skips t under `go test -short`: these tests start real servers.
func SkipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
}

// RepoRoot returns the directory holding go.mod, found by walking up from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// Binary returns the path of the cairn binary, building it on first use.
func Binary(t testing.TB) string {
	t.Helper()
	SkipShort(t)
	buildOnce.Do(func() {
		if p := os.Getenv("CAIRN_BIN"); p != "" {
			buildPath, buildErr = filepath.Abs(p)
			if buildErr == nil {
				_, buildErr = os.Stat(buildPath)
			}
			return
		}
		root, err := RepoRoot()
		if err != nil {
			buildErr = err
			return
		}
		buildDir, err = os.MkdirTemp("", "cairn-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(buildDir, "cairn")
		cmd := exec.Command("go", "build", "-o", buildPath, "./cmd/cairn")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/cairn: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("cairn binary: %v", buildErr)
	}
	return buildPath
}

// RandomKey returns n random bytes, hex encoded.
func RandomKey(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// Options says how to start a server. The zero value (besides DataDir) starts it with freshly
// generated root keys passed by flag.
type Options struct {
	DataDir   string
	AccessKey string // with SecretKey: passed by flag; both empty: generated unless NoKeys
	SecretKey string
	NoKeys    bool     // pass no key flags (first-start credential generation)
	Args      []string // extra arguments after the standard ones
	Env       []string // extra environment, KEY=VALUE
}

// Server is a running cairn process.
type Server struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string
	DataDir   string
	LogPath   string // stdout and stderr of the process, interleaved

	t       testing.TB
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	waitErr error

	mu     sync.Mutex
	stdout []string
	stderr []string
}

// StartServer starts cairn on a free port of 127.0.0.1 with generated root keys, data in
// dataDir, and stops it when the test ends.
func StartServer(t testing.TB, dataDir string) *Server {
	t.Helper()
	return Start(t, Options{DataDir: dataDir})
}

// Start starts cairn as o says and waits until it has printed its endpoint and /healthz answers
// 200. The process is killed when the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	bin := Binary(t)
	if o.DataDir == "" {
		o.DataDir = t.TempDir()
	}
	if !o.NoKeys && o.AccessKey == "" && o.SecretKey == "" {
		o.AccessKey = "CAIRN" + strings.ToUpper(RandomKey(8))
		o.SecretKey = RandomKey(20)
	}
	args := []string{"server", "--data", o.DataDir, "--listen", "127.0.0.1:0"}
	if topo := ClusterTopology(); topo != nil {
		args = append([]string{"local-cluster"}, append(topo, args[1:]...)...)
	}
	if !o.NoKeys {
		args = append(args, "--root-access-key", o.AccessKey, "--root-secret-key", o.SecretKey)
	}
	args = append(args, o.Args...)

	logDir := t.TempDir()
	s := &Server{
		AccessKey: o.AccessKey,
		SecretKey: o.SecretKey,
		DataDir:   o.DataDir,
		LogPath:   filepath.Join(logDir, "server.log"),
		t:         t,
		done:      make(chan struct{}),
	}
	logFile, err := os.Create(s.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = logDir
	// A clean environment as far as Cairn is concerned: the flags above are the whole config.
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CAIRN_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, o.Env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	s.cmd = cmd

	endpoint := make(chan string, 1)
	var logMu sync.Mutex
	var readers sync.WaitGroup
	pump := func(r io.Reader, lines *[]string, watch bool) {
		defer readers.Done()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			*lines = append(*lines, line)
			s.mu.Unlock()
			logMu.Lock()
			fmt.Fprintln(logFile, line)
			logMu.Unlock()
			if watch {
				if m := endpointLine.FindStringSubmatch(line); m != nil {
					select {
					case endpoint <- m[1]:
					default:
					}
				}
			}
		}
		io.Copy(io.Discard, r)
	}
	readers.Add(2)
	go pump(stdout, &s.stdout, true)
	go pump(stderr, &s.stderr, false)
	go func() {
		readers.Wait()
		s.waitErr = cmd.Wait()
		logFile.Close()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.Kill()
		if t.Failed() {
			t.Logf("server log (%s), last lines:\n%s", s.LogPath, s.LogTail(60))
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	select {
	case s.Endpoint = <-endpoint:
	case <-s.done:
		t.Fatalf("cairn exited before printing its endpoint (%v); log:\n%s", s.waitErr, s.LogTail(60))
	case <-ctx.Done():
		t.Fatalf("cairn printed no 'cairn: S3 endpoint' line within %v; log:\n%s", StartTimeout, s.LogTail(60))
	}
	if err := s.waitHealthy(ctx); err != nil {
		t.Fatalf("%v; log:\n%s", err, s.LogTail(60))
	}
	return s
}

// waitHealthy polls /healthz until it answers 200. Each GET may take until ctx ends: a slow
// answer on a loaded machine is waited for, not cut off and asked again.
func (s *Server) waitHealthy(ctx context.Context) error {
	var last string
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Endpoint+"/healthz", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-s.done:
			return fmt.Errorf("cairn exited while waiting for /healthz (%v)", s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("GET %s/healthz not 200 within %v: %s", s.Endpoint, StartTimeout, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Kill sends SIGKILL and waits for the process to be gone. Safe to call more than once.
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// Signal sends sig to the process (SIGSTOP and SIGCONT pause and resume it).
func (s *Server) Signal(sig os.Signal) error {
	if s.cmd == nil || s.cmd.Process == nil {
		return errors.New("no process")
	}
	return s.cmd.Process.Signal(sig)
}

// Stop asks the server to shut down (SIGTERM) and kills it if it has not exited within timeout.
// It returns the process's exit error, if any.
func (s *Server) Stop(timeout time.Duration) error {
	select {
	case <-s.done:
		return s.waitErr
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return s.waitErr
	case <-time.After(timeout):
		s.Kill()
		return fmt.Errorf("cairn did not exit within %v of SIGTERM", timeout)
	}
}

// Exited reports whether the process has exited.
func (s *Server) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Stdout returns the lines the server has printed on stdout so far.
func (s *Server) Stdout() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.stdout...)
}

// Output returns everything the server has printed so far, stdout then stderr.
func (s *Server) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.stdout, "\n") + "\n" + strings.Join(s.stderr, "\n")
}

// LogTail returns the last n lines of the server's log file.
func (s *Server) LogTail(n int) string {
	b, err := os.ReadFile(s.LogPath)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Context returns a context that ends when the test's deadline (if any) is near.
func Context(t testing.TB) context.Context {
	ctx := context.Background()
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if dl, ok := d.Deadline(); ok {
			c, cancel := context.WithDeadline(ctx, dl.Add(-5*time.Second))
			t.Cleanup(cancel)
			return c
		}
	}
	return ctx
}
