package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/microstore"
	"github.com/cairn-store/cairn/internal/testserver"
	"github.com/cairn-store/cairn/internal/workload"
)

// The microstores' description through the real server: made, changed and removed with
// `cairn microstore`, each change checked against the others and against the store's storage
// policies, each a new generation of the document the store keeps.
func TestMicrostoreCommands(t *testing.T) {
	for _, k := range []string{"CAIRN_ENDPOINT", "CAIRN_ACCESS_KEY", "CAIRN_SECRET_KEY"} {
		t.Setenv(k, "")
	}
	endpoint := testserver.Start(t, "ms-root", "ms-root-secret")
	ms := func(args ...string) (string, error) {
		return runCairn(t, append([]string{"microstore", "--endpoint", endpoint, "--access-key", "ms-root", "--secret-key", "ms-root-secret"}, args...)...)
	}
	must := func(args ...string) microstore.Description {
		t.Helper()
		out, err := ms(append(args, "--json")...)
		if err != nil {
			t.Fatalf("cairn microstore %s: %v", strings.Join(args, " "), err)
		}
		var d microstore.Description
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		return d
	}
	if d := must("list"); d.Generation != 0 || len(d.Microstores) != 0 {
		t.Fatalf("a new store's microstores: %+v", d)
	}
	d := must("create", "small", "--policy", "policy-0", "--proxy", "127.0.0.1:9001", "--class", "A", "--class", "b")
	if d.Generation != 1 || len(d.Microstores) != 1 {
		t.Fatalf("after create: %+v", d)
	}
	m := d.Microstores[0]
	if m.Name != "small" || m.Policy != "Policy-0" || len(m.Proxies) != 1 || len(m.Classes) != 2 || m.Classes[1] != workload.SmallWrites {
		t.Errorf("created %+v (the policy by its own name)", m)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "other", "--policy", "Policy-0"}, "MicrostoreConflict"},
		{[]string{"create", "small", "--policy", "Policy-0"}, "MicrostoreConflict"},
		{[]string{"create", "big", "--policy", "nope"}, "no storage policy"},
		{[]string{"create", "Big", "--policy", "Policy-0"}, "InvalidArgument"},
		{[]string{"create", "big", "--policy", "Policy-0", "--class", "E"}, "one of A, B, C, D"},
		{[]string{"resize", "medium", "--proxy", "h:1"}, "NoSuchMicrostore"},
		{[]string{"resize", "small", "--proxy", "no-port"}, "InvalidArgument"},
		{[]string{"show", "medium"}, "NoSuchMicrostore"},
	} {
		if out, err := ms(bad.args...); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("cairn microstore %s: %v (%q), want an error naming %s", strings.Join(bad.args, " "), err, out, bad.want)
		}
	}
	if d := must("resize", "small", "--proxy", "127.0.0.1:9002", "--proxy", "127.0.0.1:9003"); d.Generation != 2 || len(d.Microstores[0].Proxies) != 2 {
		t.Errorf("after resize: %+v", d)
	}
	if d := must("assign", "small", "--class", "C"); d.Generation != 3 || len(d.Microstores[0].Classes) != 1 || d.Microstores[0].Classes[0] != workload.LargeReads {
		t.Errorf("after assign: %+v", d)
	}
	out, err := ms("show", "small")
	if err != nil || !strings.Contains(out, "127.0.0.1:9002,127.0.0.1:9003") || !strings.Contains(out, "Policy-0") {
		t.Errorf("show printed (%v):\n%s", err, out)
	}
	if d := must("list"); d.Generation != 3 {
		t.Errorf("the store keeps generation %d, want 3", d.Generation)
	}
	if d := must("delete", "small"); d.Generation != 4 || len(d.Microstores) != 0 {
		t.Errorf("after delete: %+v", d)
	}
	if _, err := ms("delete", "small"); err == nil || !strings.Contains(err.Error(), "NoSuchMicrostore") {
		t.Errorf("deleting it again: %v", err)
	}
	if _, err := runCairn(t, "microstore", "--endpoint", endpoint, "--access-key", "nobody", "--secret-key", "x", "list"); err == nil {
		t.Error("an unknown key listed the microstores")
	}
}
