package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
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

// `cairn local-cluster` shows where things are, not the nodes' logs: the endpoints, the root
// access key and where its secret is, and the exports for the client; its first start shows the
// generated secret once. The nodes' logs are in their files.
func TestLocalClusterTerminal(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(Binary(t), "local-cluster", "--data", dir, "--storage", "2", "--proxies", "1", "--replicas", "2", "--listen", "127.0.0.1:0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	endpoint := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
			if m := endpointLine.FindStringSubmatch(sc.Text()); m != nil {
				endpoint <- m[1]
			}
		}
	}()
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
	}()
	select {
	case <-endpoint:
	case <-time.After(StartTimeout):
		t.Fatalf("no endpoint line; stderr:\n%s", stderr.String())
	}
	var printed string
	waitFor := func(what string, cond func(string) bool) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			mu.Lock()
			printed = strings.Join(lines, "\n")
			mu.Unlock()
			if cond(printed) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("not printed: %s\n%s", what, printed)
			}
		}
	}
	waitFor("the exports", func(s string) bool { return strings.Contains(s, "export CAIRN_SECRET_KEY=") })
	var creds struct {
		AccessKey string `json:"access_key"`
		SecretKey string `json:"secret_key"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "root-credentials.json"))
	if err != nil || json.Unmarshal(data, &creds) != nil {
		t.Fatalf("root-credentials.json: %v", err)
	}
	for _, want := range []string{"root access key " + creds.AccessKey, "export CAIRN_ENDPOINT=http://127.0.0.1:", "CAIRN_ACCESS_KEY=" + creds.AccessKey, "Swift auth http://", dir + "/*.log"} {
		if !strings.Contains(printed, want) {
			t.Errorf("the terminal lacks %q:\n%s", want, printed)
		}
	}
	// The export of the secret, run by a shell, gives the secret.
	exp := regexp.MustCompile(`export CAIRN_SECRET_KEY=\$\((.*)\)`).FindStringSubmatch(printed)
	if exp == nil {
		t.Fatalf("no secret export:\n%s", printed)
	}
	out, err := exec.Command("/bin/sh", "-c", exp[1]).Output()
	if err != nil || strings.TrimSpace(string(out)) != creds.SecretKey {
		t.Errorf("the secret export gives %q (%v), want the stored secret", out, err)
	}
	// No node's log on the terminal; they are in their files.
	if strings.Contains(stderr.String(), "msg=serving") || strings.Contains(printed, "msg=serving") {
		t.Errorf("a node's log reached the terminal:\n%s", stderr.String())
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	found := false
	for _, l := range logs {
		if b, _ := os.ReadFile(l); bytes.Contains(b, []byte("msg=serving")) {
			found = true
		}
	}
	if !found {
		t.Errorf("no node log in %v holds the nodes' lines", logs)
	}
}
