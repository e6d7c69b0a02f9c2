package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/advisor"
)

// buildCairn builds the real binary once per test run.
func buildCairn(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain to build the binary with")
	}
	bin := filepath.Join(t.TempDir(), "cairn")
	cmd := exec.Command(goBin, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// The advisor through the real binary: the catalog it prints is the one it reads, recommend
// prints a table and JSON, and bad inputs end in one line on stderr and exit status 1.
func TestAdvisorBinary(t *testing.T) {
	bin := buildCairn(t)
	run := func(args ...string) (string, string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), err
	}
	out, _, err := run("advisor", "catalog")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(advisor.ExampleCatalog()) {
		t.Fatalf("advisor catalog printed something else than the example catalog")
	}
	catFile := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(catFile, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := run("advisor", "recommend", "--catalog", catFile, "--workload", "A", "--capacity", "200TB", "--throughput", "1GB/s")
	if err != nil {
		t.Fatalf("recommend: %v\n%s", err, stderr)
	}
	for _, want := range []string{"lowest cost for workload A, 3 replicas, 1 zone", "RECOMMENDED  cost", "partition power", "bottleneck:", "sampling 1:N", "profile c:cN", "runners-up:"} {
		if !strings.Contains(out, want) {
			t.Errorf("recommend's table lacks %q:\n%s", want, out)
		}
	}
	jsonFile := filepath.Join(t.TempDir(), "r.json")
	if _, stderr, err = run("advisor", "recommend", "--catalog", catFile, "--workload", "D", "--ec", "4+2", "--zones", "3",
		"--capacity", "1PB", "--budget", "500k", "--json", jsonFile); err != nil {
		t.Fatalf("recommend --json: %v\n%s", err, stderr)
	}
	var res advisor.Result
	data, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if res.Objective != advisor.MaximizeThroughput || res.Best.Policy.K != 4 || res.Best.UsableTB < 1000 || res.Best.Cost.Total > 500000 ||
		res.Best.Prediction.RatedMBps <= 0 {
		t.Errorf("JSON result: objective %s, policy %+v, usable %.0f TB, cost %.0f, rated %.0f MB/s",
			res.Objective, res.Best.Policy, res.Best.UsableTB, res.Best.Cost.Total, res.Best.Prediction.RatedMBps)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--capacity", "200TB", "--throughput", "1GB/s", "--budget", "100k"}, "cairn: invalid request: capacity, throughput and budget all given"},
		{[]string{}, "cairn: invalid request: give two of --capacity, --throughput and --budget (0 given)"},
		{[]string{"--capacity", "200"}, `cairn: invalid request: capacity "200": give a unit`},
		{[]string{"--capacity", "200TB", "--budget", "5000"}, "cairn: no configuration meets the constraints: a budget of 5000 USD is too small"},
		{[]string{"--capacity", "900PB", "--throughput", "1GB/s"}, "cairn: no configuration meets the constraints: 900000 TB usable is more than the catalog can hold"},
		{[]string{"--capacity", "200TB", "--budget", "1M", "--replicas", "3", "--ec", "4+2"}, "cairn: invalid durability policy: give --replicas or --ec, not both"},
	} {
		args := append([]string{"advisor", "recommend", "--catalog", catFile, "--workload", "A"}, tc.args...)
		out, stderr, err := run(args...)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("%v: err %v, want exit status 1", tc.args, err)
		}
		if out != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("%v: stdout %q, stderr %q; want one line starting %q", tc.args, out, stderr, tc.want)
		}
	}
	// calibrate refuses, in one line and before starting anything, what it cannot run.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--data", t.TempDir()}, "cairn: calibrate: invalid configuration: "},
		{[]string{"--data", filepath.Join(t.TempDir(), "new"), "--sizes", "4KiB,lots"}, "cairn: advisor calibrate: --sizes: "},
		{[]string{"--data", filepath.Join(t.TempDir(), "new"), "--storage", "2"}, "cairn: calibrate: invalid configuration: 3 replicas over 2 storage nodes"},
	} {
		out, stderr, err := run(append([]string{"advisor", "calibrate"}, tc.args...)...)
		if err == nil || out != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("calibrate %v: err %v, stdout %q, stderr %q; want one line starting %q", tc.args, err, out, stderr, tc.want)
		}
	}

	// A catalog with problems: every problem on a line of its own.
	bad := strings.Replace(strings.Replace(string(advisor.ExampleCatalog()), "cores: 16", "cores: 0", 1), "iops: 180", "iops: -1", 1)
	if err := os.WriteFile(catFile, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, _ = run("advisor", "recommend", "--catalog", catFile, "--workload", "A", "--capacity", "1PB", "--budget", "1M")
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 2 ||
		!strings.Contains(lines[0], "node_types[0] (proxy-1u): cores must be > 0") || !strings.Contains(lines[1], "disk_types[0] (hdd-8t): iops must be > 0") {
		t.Errorf("bad catalog: stderr %q", stderr)
	}
}
