package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchReport is the part of `cairn bench --json` these tests read: the names are an
// interface scripts depend on (docs/bench.md).
type benchReport struct {
	Kind     string `json:"kind"`
	Protocol string `json:"protocol"`
	Workload string `json:"workload"`
	Ops      map[string]struct {
		Operations int64              `json:"operations"`
		Errors     int64              `json:"errors"`
		OpsPerSec  float64            `json:"ops_per_sec"`
		MBPerSec   float64            `json:"mb_per_sec"`
		Latency    map[string]float64 `json:"latency_ms"`
	} `json:"ops"`
	Stages []struct {
		Name   string            `json:"name"`
		Kind   string            `json:"kind"`
		Series []json.RawMessage `json:"series"`
		Events []struct {
			Name     string `json:"name"`
			ExitCode int    `json:"exit_code"`
			Output   string `json:"output"`
		} `json:"events"`
		Ramp *struct {
			Steps []json.RawMessage `json:"steps"`
			Knee  struct {
				Concurrency int `json:"concurrency"`
			} `json:"knee"`
		} `json:"ramp"`
	} `json:"stages"`
}

func readBenchReport(t *testing.T, path string) benchReport {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r benchReport
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// TestBenchWorkloadFile runs a workload file with every kind of stage and a timed event
// through the real binary against a real server, and checks the JSON, the HTML report, the
// comparison and the failure messages a user sees.
func TestBenchWorkloadFile(t *testing.T) {
	s := StartServer(t, "")
	c := newCLI(t, s)
	wl := c.writeFile("wl.yaml", []byte(`
name: e2e
objects: 100
size: {histogram: [{size: 1KiB, weight: 3}, {min: 8KiB, max: 64KiB, weight: 1}]}
mix: {get: 70, put: 10, delete: 5, head: 10, list: 5}
keys: {kind: zipf, s: 1.2}
concurrency: 4
stages:
  - {name: load, kind: prepare}
  - {name: counted, operations: 400}
  - name: steady
    duration: 2s
    events:
      - {name: marker, at: 1s, command: "echo hello-from-event"}
  - name: open
    duration: 1s
    rate: 200
  - name: ramp
    kind: ramp
    ramp: {start: 1, max: 4, step_duration: 500ms}
  - {name: clean, kind: cleanup}
`))
	_, stderr := c.ok("bench", "run", "--workload", wl, "--json", "a.json", "--html", "a.html", "--bucket", "e2e-bench")
	if !strings.Contains(stderr, "stage steady (main)") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
	r := readBenchReport(t, filepath.Join(c.dir, "a.json"))
	if r.Kind != "run" || r.Protocol != "s3" || r.Workload != "e2e" || len(r.Stages) != 6 {
		t.Fatalf("report: %+v", r)
	}
	// Every operation of the mix is in the report however slow the machine: the stage
	// "counted" alone runs 400 of them (no delete or list among them has odds of about 1e-9),
	// where the timed stages may run few.
	for _, op := range []string{"get", "put", "delete", "head", "list"} {
		if s := r.Ops[op]; s.Operations == 0 || s.Errors != 0 || s.Latency["p99"] <= 0 {
			t.Errorf("op %s: %+v", op, s)
		}
	}
	if ev := r.Stages[2].Events; len(ev) != 1 || ev[0].ExitCode != 0 || !strings.Contains(ev[0].Output, "hello-from-event") {
		t.Errorf("events: %+v", ev)
	}
	if rp := r.Stages[4].Ramp; rp == nil || len(rp.Steps) == 0 || rp.Knee.Concurrency == 0 {
		t.Errorf("ramp: %+v", rp)
	}
	html := string(c.readFile("a.html"))
	if !strings.Contains(html, "<svg") || !strings.Contains(html, "e2e") || strings.Contains(html, "<script src") {
		t.Errorf("html report: %d bytes", len(html))
	}
	// After cleanup the bucket is gone, so a listing through the client fails cleanly.
	c.fails("e2e-bench", "ls", "e2e-bench")

	// The simple fixed load, and a comparison of the two runs.
	c.ok("bench", "run", "--op", "get", "--size", "4KiB", "--objects", "50", "--duration", "1s", "--concurrency", "2", "--json", "b.json")
	out, _ := c.ok("bench", "compare", "a.json", "b.json", "--html", "cmp.html")
	if cmp := string(c.readFile("cmp.html")); !strings.Contains(cmp, "<svg") {
		t.Errorf("comparison page: %d bytes, no chart", len(cmp))
	}
	if !strings.Contains(out, "get") || !strings.Contains(out, "x") {
		t.Errorf("compare: %s", out)
	}

	bad := c.writeFile("bad.yaml", []byte("mix: {get: 1}\nsize: {min: 8KiB, max: 1KiB}\n"))
	c.fails("bad.yaml", "bench", "run", "--workload", bad)
	c.fails("no-such-file.yaml", "bench", "run", "--workload", "no-such-file.yaml")
	c.fails("rejected the credentials", "bench", "run", "--workload", "A", "--secret-key", "wrong")
	c.fails("cannot reach", "bench", "run", "--workload", "A", "--endpoint", closedEndpoint(t))
}

// TestBenchAgainstSwiftPeer runs the bench against the real OpenStack Swift peer, through its
// native API and its s3api, when CAIRN_TEST_SWIFT_AUTH names it (scripts/test.sh starts it with
// test/peers/swift/setup.sh and exports it when it can run there: root and apt-get).
func TestBenchAgainstSwiftPeer(t *testing.T) {
	auth := os.Getenv("CAIRN_TEST_SWIFT_AUTH")
	if auth == "" {
		t.Skip("CAIRN_TEST_SWIFT_AUTH not set: no Swift peer (see scripts/test.sh)")
	}
	user, key := os.Getenv("CAIRN_TEST_SWIFT_USER"), os.Getenv("CAIRN_TEST_SWIFT_KEY")
	if user == "" {
		user, key = "test:tester", "testing"
	}
	s := &Server{Endpoint: strings.TrimSuffix(auth, "/auth/v1.0"), AccessKey: user, SecretKey: key}
	c := newCLI(t, s)
	// A count of operations, not a duration: every operation of the mix then shows in the
	// report however slow the peer (no put or delete in 200 has odds of about 1e-9).
	wl := c.writeFile("wl.yaml", []byte("name: peer\nobjects: 20\nsize: 4KiB\nmix: {get: 80, put: 10, delete: 10}\nconcurrency: 4\noperations: 200\ncleanup: true\n"))
	for _, proto := range []struct {
		name string
		args []string
	}{
		{"swift", []string{"--protocol", "swift", "--auth-url", auth, "--user", user, "--key", key}},
		{"s3", nil}, // Swift's s3api: access key account:user, secret the key
	} {
		// A bucket of its own: the peer may serve another suite's run at the same time.
		args := append([]string{"bench", "run", "--workload", wl, "--json", proto.name + ".json", "--bucket", "cairn-e2e-" + proto.name + "-" + RandomKey(4)}, proto.args...)
		c.ok(args...)
		r := readBenchReport(t, filepath.Join(c.dir, proto.name+".json"))
		if r.Protocol != proto.name {
			t.Errorf("%s: protocol %q", proto.name, r.Protocol)
		}
		for _, op := range []string{"get", "put", "delete"} {
			if s := r.Ops[op]; s.Operations == 0 || s.Errors != 0 {
				t.Errorf("%s %s: %+v", proto.name, op, s)
			}
		}
	}
	c.fails("rejected the credentials", "bench", "run", "--workload", wl, "--protocol", "swift", "--auth-url", auth, "--user", user, "--key", "wrong")
}
