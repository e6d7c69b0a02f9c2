package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/auth"
	"github.com/cairn-store/cairn/internal/testserver"
)

func TestAdminCommands(t *testing.T) {
	for _, k := range []string{"CAIRN_ENDPOINT", "CAIRN_ACCESS_KEY", "CAIRN_SECRET_KEY"} {
		t.Setenv(k, "")
	}
	endpoint := testserver.Start(t, "cli-root", "cli-root-secret")
	adm := func(args ...string) string {
		t.Helper()
		out, err := runCairn(t, append([]string{"admin", "--endpoint", endpoint, "--access-key", "cli-root", "--secret-key", "cli-root-secret"}, args...)...)
		if err != nil {
			t.Fatalf("cairn admin %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	decode := func(s string, v any) {
		t.Helper()
		if err := json.Unmarshal([]byte(s), v); err != nil {
			t.Fatalf("output is not JSON: %v\n%s", err, s)
		}
	}
	// The embedded default's status: one node, its one device, served.
	var st admin.ClusterStatus
	decode(adm("status", "--json"), &st)
	if st.Summary.Nodes != 1 || st.Summary.NodesDown != 0 || st.Summary.Devices != 1 || st.Summary.DevicesFailed != 0 ||
		st.Summary.TotalBytes <= 0 || len(st.Nodes) != 1 || st.Nodes[0].Devices[0].Name != "d0" || len(st.Rings) != 1 {
		t.Fatalf("status of the embedded default: %+v", st)
	}
	if _, ok := st.Nodes[0].Daemons["auditor"]; !ok {
		t.Fatalf("status of the embedded default reports no auditor: %+v", st.Nodes[0].Daemons)
	}
	if human := adm("status"); !strings.Contains(human, "nodes:") || !strings.Contains(human, "d0") {
		t.Errorf("status printed:\n%s", human)
	}
	// No bucket holds an ACL of the old meaning on a new store: the migration finds none
	// (internal/server's TestACLMigration migrates some).
	var mig admin.ACLMigrationReport
	decode(adm("acl", "migrate", "--dry-run", "--json"), &mig)
	if !mig.DryRun || len(mig.Legacy) != 0 || mig.Migrated != 0 {
		t.Errorf("acl migrate --dry-run: %+v", mig)
	}
	if out := adm("acl", "migrate"); !strings.Contains(out, "0 with an ACL of the old meaning: migrated 0, left 0") {
		t.Errorf("acl migrate printed %q", out)
	}
	if out := adm("account", "create", "acme"); out != "created account acme\n" {
		t.Errorf("account create printed %q", out)
	}
	var uc auth.UserCredentials
	decode(adm("user", "create", "acme:bob", "--admin", "--json"), &uc)
	if uc.Account != "acme" || uc.User != "bob" || !uc.Admin || uc.AccessKey == "" || uc.SecretKey == "" || uc.SwiftKey == "" {
		t.Fatalf("user create --json: %+v", uc)
	}
	human := adm("user", "create", "acme:eve")
	for _, want := range []string{"acme:eve", "S3 access key:", "S3 secret key:", "Swift key:", "X-Auth-Key"} {
		if !strings.Contains(human, want) {
			t.Errorf("user create printed no %q:\n%s", want, human)
		}
	}
	// Keys chosen by the operator (tempauth-style, as Swift's functional tests use) work at once.
	var given auth.UserCredentials
	decode(adm("user", "create", "acme:tk", "--user-access-key", "acme:tk", "--user-secret-key", "testing", "--user-swift-key", "testing", "--json"), &given)
	if given.AccessKey != "acme:tk" || given.SecretKey != "testing" || given.SwiftKey != "testing" {
		t.Fatalf("user create with given keys: %+v", given)
	}
	req, _ := http.NewRequest("GET", endpoint+"/auth/v1.0", nil)
	req.Header.Set("X-Auth-User", "acme:tk")
	req.Header.Set("X-Auth-Key", "testing")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 || resp.Header.Get("X-Auth-Token") == "" {
		t.Fatalf("Swift auth with the given key: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	adm("user", "delete", "acme:tk")
	var list admin.AccountList
	decode(adm("account", "list", "--json"), &list)
	if len(list.Accounts) != 2 || list.Accounts[0].Name != "acme" || list.Accounts[0].Users != 2 {
		t.Errorf("account list --json: %+v", list)
	}
	var q struct {
		QuotaBytes   int64 `json:"quota_bytes"`
		QuotaObjects int64 `json:"quota_objects"`
	}
	decode(adm("account", "quota", "acme", "--bytes", "10GiB", "--objects", "5", "--json"), &q)
	if q.QuotaBytes != 10<<30 || q.QuotaObjects != 5 {
		t.Errorf("quota: %+v", q)
	}
	decode(adm("account", "quota", "acme", "--objects", "none", "--json"), &q)
	if q.QuotaBytes != 10<<30 || q.QuotaObjects != 0 {
		t.Errorf("quota after --objects none: %+v", q)
	}
	var u admin.AccountUsage
	decode(adm("account", "usage", "acme", "--json"), &u)
	if u.Account != "acme" || u.QuotaBytes != 10<<30 || u.Usage != (admin.Usage{}) {
		t.Errorf("usage: %+v", u)
	}
	if out := adm("account", "show", "acme"); !strings.Contains(out, "acme:bob") || !strings.Contains(out, "10.0 GiB") {
		t.Errorf("account show:\n%s", out)
	}
	var rotated auth.UserCredentials
	decode(adm("user", "rotate-keys", "acme:bob", "--json"), &rotated)
	if rotated.AccessKey == uc.AccessKey || rotated.SecretKey == uc.SecretKey {
		t.Errorf("rotate-keys kept the keys: %+v", rotated)
	}
	var users admin.UserList
	decode(adm("user", "list", "acme", "--json"), &users)
	if len(users.Users) != 2 || users.Users[0].AccessKey != rotated.AccessKey {
		t.Errorf("user list: %+v", users)
	}
	adm("user", "delete", "acme:bob")
	adm("user", "delete", "acme:eve")
	if out := adm("account", "delete", "acme"); out != "deleted account acme\n" {
		t.Errorf("account delete printed %q", out)
	}

	// Failures are one line naming the problem.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--secret-key", "wrong-secret", "account", "list"}, "refused the key: the signature does not match"},
		{[]string{"account", "show", "nope"}, "(NoSuchAccount)"},
		{[]string{"account", "create", "acme:x"}, "(InvalidArgument)"},
		{[]string{"user", "create", "nope:u"}, "(NoSuchAccount)"},
		{[]string{"user", "create", "root:x", "--user-access-key", "cli-root"}, "(KeyExists)"},
		{[]string{"user", "create", "root:x", "--user-secret-key", "short"}, "(InvalidArgument)"},
		{[]string{"user", "create", "nocolon"}, "want ACCOUNT:USER"},
		{[]string{"account", "quota", "root", "--bytes", "lots"}, "--bytes"},
		{[]string{"--endpoint", "http://127.0.0.1:1", "account", "list"}, "cannot reach http://127.0.0.1:1: connection refused"},
		{[]string{"--endpoint", endpoint + "/elsewhere", "account", "list"}, "not a Cairn admin API"},
		{[]string{"--access-key", "", "account", "list"}, "root access key and secret key are required"},
	} {
		args := append([]string{"admin", "--endpoint", endpoint, "--access-key", "cli-root", "--secret-key", "cli-root-secret"}, tc.args...)
		_, err := runCairn(t, args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("cairn admin %s: %v; want one line with %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

func TestAdminParseQuota(t *testing.T) {
	for _, tc := range []struct {
		in    string
		bytes bool
		want  int64
	}{
		{"0", true, 0}, {"none", true, 0}, {"1024", true, 1024}, {"10GiB", true, 10 << 30}, {"500MB", true, 500e6},
		{"2TiB", true, 2 << 40}, {"1.5TB", true, 1.5e12}, {"1PiB", true, 1 << 50}, {"None", false, 0}, {"1000", false, 1000},
	} {
		if got, err := parseQuota(tc.in, tc.bytes); err != nil || got != tc.want {
			t.Errorf("parseQuota(%q, %v) = %d, %v; want %d", tc.in, tc.bytes, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		in    string
		bytes bool
	}{{"lots", true}, {"-1", false}, {"10GiB", false}, {"-2TiB", true}, {"", true}} {
		if got, err := parseQuota(tc.in, tc.bytes); err == nil {
			t.Errorf("parseQuota(%q, %v) = %d: want an error", tc.in, tc.bytes, got)
		}
	}
}

func TestAdminSplitUser(t *testing.T) {
	if a, u, err := splitUser("acme:bob"); err != nil || a != "acme" || u != "bob" {
		t.Errorf("splitUser(acme:bob) = %q, %q, %v", a, u, err)
	}
	for _, bad := range []string{"acme", ":bob", "acme:", ""} {
		if _, _, err := splitUser(bad); err == nil {
			t.Errorf("splitUser(%q): want an error", bad)
		}
	}
}
