package auth

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func openTest(t *testing.T, dir string) *Store {
	t.Helper()
	s, _, err := Open(Config{Dir: dir, RootAccessKey: "root-ak", RootSecretKey: "root-secret"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTenantsPersistAcrossReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	if _, err := s.CreateAccount(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	creds, err := s.CreateUser(ctx, "acme", "bob", true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(creds.AccessKey, "CAIRN") || len(creds.AccessKey) != 5+accessKeyLen ||
		strings.ToUpper(creds.AccessKey) != creds.AccessKey || len(creds.SecretKey) != secretKeyLen || len(creds.SwiftKey) != swiftKeyLen {
		t.Fatalf("generated credentials have the wrong shape: %+v", creds)
	}
	if err := s.SetQuota(ctx, "acme", 10<<30, 1000); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateMetadata(ctx, "acme", map[string]string{"color": "blue"}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, tenantsFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("tenants file: %v, %v; want mode 0600", st, err)
	}

	s2 := openTest(t, dir)
	a, err := s2.Account(ctx, "acme")
	if err != nil || a.QuotaBytes != 10<<30 || a.QuotaObjects != 1000 || a.Users != 1 || a.Metadata["color"] != "blue" || a.Created.IsZero() {
		t.Fatalf("after reopen: %+v, %v", a, err)
	}
	k, err := s2.Lookup(ctx, creds.AccessKey)
	if err != nil || k.SecretKey != creds.SecretKey || k.Account != "acme" || k.User != "bob" || !k.Admin || k.Root {
		t.Fatalf("after reopen Lookup = %+v, %v", k, err)
	}
	id, err := s2.AuthenticateSwift(ctx, "acme", "bob", creds.SwiftKey)
	if err != nil || id != (Identity{Account: "acme", User: "bob", Admin: true}) {
		t.Fatalf("after reopen AuthenticateSwift = %+v, %v", id, err)
	}
	accts, err := s2.Accounts(ctx)
	if err != nil || len(accts) != 2 || accts[0].Name != "acme" || accts[1].Name != RootAccount {
		t.Fatalf("Accounts = %+v, %v", accts, err)
	}
	// The root account's created time is fixed on first start, not made up on each.
	a1, _ := s.Account(ctx, RootAccount)
	a2, _ := s2.Account(ctx, RootAccount)
	if a1.Created.IsZero() || !a1.Created.Equal(a2.Created) {
		t.Fatalf("root account created %v, then %v", a1.Created, a2.Created)
	}
}

func TestTenantsRootKey(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	k, err := s.Lookup(ctx, "root-ak")
	if err != nil || !k.Root || !k.Admin || k.Account != RootAccount || k.User != RootUser {
		t.Fatalf("root Lookup = %+v, %v", k, err)
	}
	id, err := s.AuthenticateSwift(ctx, RootAccount, RootUser, "root-secret")
	if err != nil || id != (Identity{Account: RootAccount, User: RootUser, Admin: true, Root: true}) {
		t.Fatalf("root:root = %+v, %v", id, err)
	}
	users, err := s.Users(ctx, RootAccount)
	if err != nil || len(users) != 1 || !users[0].Root || users[0].AccessKey != "root-ak" {
		t.Fatalf("Users(root) = %+v, %v", users, err)
	}
	for name, err := range map[string]error{
		"delete root account": s.DeleteAccount(ctx, RootAccount),
		"delete root user":    s.DeleteUser(ctx, RootAccount, RootUser),
	} {
		if !errors.Is(err, ErrRootAccount) {
			t.Errorf("%s: %v, want ErrRootAccount", name, err)
		}
	}
	if _, err := s.RotateKeys(ctx, RootAccount, RootUser); !errors.Is(err, ErrRootAccount) {
		t.Errorf("rotate root: %v", err)
	}
	if _, err := s.CreateUser(ctx, RootAccount, RootUser, false); !errors.Is(err, ErrUserExists) {
		t.Errorf("create root:root: %v", err)
	}
	if _, err := s.CreateAccount(ctx, RootAccount); !errors.Is(err, ErrAccountExists) {
		t.Errorf("create account root: %v", err)
	}
	// Other users of the root account are ordinary users: they act for it, but are not root.
	c, err := s.CreateUser(ctx, RootAccount, "ops", false)
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := s.Lookup(ctx, c.AccessKey); k.Root || k.Account != RootAccount {
		t.Errorf("root:ops = %+v", k)
	}
}

func TestTenantsErrors(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	for _, bad := range []string{"", strings.Repeat("a", 65), "a b", "a:b", "a/b", "é", "a.b", "../x"} {
		if _, err := s.CreateAccount(ctx, bad); !errors.Is(err, ErrInvalidName) {
			t.Errorf("CreateAccount(%q) = %v, want ErrInvalidName", bad, err)
		}
	}
	if _, err := s.CreateAccount(ctx, strings.Repeat("a", 64)); err != nil {
		t.Errorf("a 64-character name: %v", err)
	}
	if _, err := s.CreateAccount(ctx, "A_b-9"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateAccount(ctx, "A_b-9"); !errors.Is(err, ErrAccountExists) {
		t.Errorf("duplicate account: %v", err)
	}
	if _, err := s.CreateUser(ctx, "A_b-9", "bad:name", false); !errors.Is(err, ErrInvalidName) {
		t.Errorf("bad user name: %v", err)
	}
	if _, err := s.CreateUser(ctx, "nope", "u", false); !errors.Is(err, ErrNoAccount) {
		t.Errorf("user of a missing account: %v", err)
	}
	if _, err := s.CreateUser(ctx, "A_b-9", "u", false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateUser(ctx, "A_b-9", "u", true); !errors.Is(err, ErrUserExists) {
		t.Errorf("duplicate user: %v", err)
	}
	if err := s.DeleteAccount(ctx, "A_b-9"); !errors.Is(err, ErrAccountNotEmpty) {
		t.Errorf("delete an account with users: %v", err)
	}
	if err := s.DeleteUser(ctx, "A_b-9", "v"); !errors.Is(err, ErrNoUser) {
		t.Errorf("delete a missing user: %v", err)
	}
	if _, err := s.RotateKeys(ctx, "A_b-9", "v"); !errors.Is(err, ErrNoUser) {
		t.Errorf("rotate a missing user: %v", err)
	}
	if err := s.SetQuota(ctx, "A_b-9", -1, 0); !errors.Is(err, ErrInvalidQuota) {
		t.Errorf("negative quota: %v", err)
	}
	if err := s.SetQuota(ctx, "nope", 1, 1); !errors.Is(err, ErrNoAccount) {
		t.Errorf("quota of a missing account: %v", err)
	}
	if _, err := s.Account(ctx, "nope"); !errors.Is(err, ErrNoAccount) {
		t.Errorf("missing account: %v", err)
	}
	if _, err := s.Users(ctx, "nope"); !errors.Is(err, ErrNoAccount) {
		t.Errorf("users of a missing account: %v", err)
	}
	if err := s.DeleteUser(ctx, "A_b-9", "u"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAccount(ctx, "A_b-9"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAccount(ctx, "A_b-9"); !errors.Is(err, ErrNoAccount) {
		t.Errorf("delete twice: %v", err)
	}
}

// Every way a Swift key can be wrong gives the same error, through the same constant-time
// comparison (a stand-in key for unknown users).
func TestTenantsSwiftAuthMismatches(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	s.CreateAccount(ctx, "a")
	c, err := s.CreateUser(ctx, "a", "u", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ account, user, key string }{
		{"a", "u", ""},
		{"a", "u", c.SwiftKey[:31]},
		{"a", "u", c.SwiftKey + "x"},
		{"a", "u", c.SecretKey},
		{"a", "nobody", c.SwiftKey},
		{"nope", "u", c.SwiftKey},
		{"a", "u", strings.ToLower(c.SwiftKey)},
		{RootAccount, RootUser, ""},
		{RootAccount, RootUser, "root-secret-"},
		{RootAccount, "other", "root-secret"},
		// The decoy is never a valid key.
		{"nope", "u", s.current().decoy},
	} {
		if id, err := s.AuthenticateSwift(ctx, tc.account, tc.user, tc.key); !errors.Is(err, ErrBadSwiftKey) {
			t.Errorf("AuthenticateSwift(%q, %q, %q) = %+v, %v; want ErrBadSwiftKey", tc.account, tc.user, tc.key, id, err)
		}
	}
	if strings.Contains(func() string { _, err := s.AuthenticateSwift(ctx, "a", "u", "guess-7q"); return err.Error() }(), "guess-7q") {
		t.Error("the error repeats the key it was given")
	}
}

func TestTenantsRotateAndDeleteRevokeAtOnce(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	s.CreateAccount(ctx, "a")
	old, _ := s.CreateUser(ctx, "a", "u", false)
	nu, err := s.RotateKeys(ctx, "a", "u")
	if err != nil {
		t.Fatal(err)
	}
	if nu.AccessKey == old.AccessKey || nu.SecretKey == old.SecretKey || nu.SwiftKey == old.SwiftKey {
		t.Fatalf("rotation kept a key: %+v → %+v", old, nu)
	}
	if _, err := s.Lookup(ctx, old.AccessKey); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("old access key after rotation: %v", err)
	}
	if _, err := s.AuthenticateSwift(ctx, "a", "u", old.SwiftKey); !errors.Is(err, ErrBadSwiftKey) {
		t.Errorf("old Swift key after rotation: %v", err)
	}
	if k, err := s.Lookup(ctx, nu.AccessKey); err != nil || k.SecretKey != nu.SecretKey {
		t.Errorf("new key: %+v, %v", k, err)
	}
	users, _ := s.Users(ctx, "a")
	if len(users) != 1 || users[0].AccessKey != nu.AccessKey {
		t.Errorf("Users = %+v", users)
	}
	if err := s.DeleteUser(ctx, "a", "u"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lookup(ctx, nu.AccessKey); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("key of a deleted user: %v", err)
	}
}

// A change that cannot be written is not made: memory and disk keep the old state, and a temp
// file a crash left behind is removed by the next Open.
func TestTenantsFailedWriteChangesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	if _, err := s.CreateAccount(ctx, "kept"); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, tenantsFile))

	crash := errors.New("simulated crash before rename")
	writeFile = func(path string, v any) error {
		// What a crash between write and rename leaves: a temp file, the old file in place.
		os.WriteFile(filepath.Join(filepath.Dir(path), tempPrefix(path)+"123"), []byte(`{"half":`), 0o600)
		return crash
	}
	t.Cleanup(func() { writeFile = writeFileDurably })
	if _, err := s.CreateAccount(ctx, "lost"); !errors.Is(err, crash) {
		t.Fatalf("CreateAccount with a failing write: %v", err)
	}
	if _, err := s.Account(ctx, "lost"); !errors.Is(err, ErrNoAccount) {
		t.Errorf("a change that was not written is visible: %v", err)
	}
	if err := s.SetQuota(ctx, "kept", 5, 5); !errors.Is(err, crash) {
		t.Fatal(err)
	}
	if a, _ := s.Account(ctx, "kept"); a.QuotaBytes != 0 {
		t.Errorf("quota changed in memory by a failed write: %+v", a)
	}
	writeFile = writeFileDurably
	after, _ := os.ReadFile(filepath.Join(dir, tenantsFile))
	if string(before) != string(after) {
		t.Error("a failed write changed the file")
	}
	s2 := openTest(t, dir)
	if _, err := s2.Account(ctx, "kept"); err != nil {
		t.Errorf("after the crash: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(m) != 0 {
		t.Errorf("Open left temp files: %v", m)
	}
}

func TestTenantsCorruptFileStopsOpen(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"truncated":      `{"version":1,"accounts":{`,
		"future version": `{"version":99,"accounts":{}}`,
		"bad name":       `{"version":1,"accounts":{"a b":{"users":{}}}}`,
		"duplicate key": `{"version":1,"accounts":{"a":{"users":{
			"u":{"access_key":"CAIRNX","secret_key":"12345678","swift_key":"k"},
			"v":{"access_key":"CAIRNX","secret_key":"12345678","swift_key":"k"}}}}}`,
	} {
		os.WriteFile(filepath.Join(dir, tenantsFile), []byte(content), 0o600)
		if _, _, err := Open(Config{Dir: dir, RootAccessKey: "root-ak", RootSecretKey: "root-secret"}); err == nil {
			t.Errorf("%s: Open accepted the file", name)
		}
	}
}

// Lookups run while changes are written; the race detector checks the snapshot handover.
func TestTenantsConcurrentUse(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	s.CreateAccount(ctx, "a")
	c, _ := s.CreateUser(ctx, "a", "base", false)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.Lookup(ctx, c.AccessKey); err != nil {
					t.Error(err)
					return
				}
				s.Users(ctx, "a")
			}
		})
	}
	var made sync.WaitGroup
	for i := range 8 {
		made.Go(func() {
			if _, err := s.CreateUser(ctx, "a", "u"+string(rune('a'+i)), false); err != nil {
				t.Error(err)
			}
		})
	}
	made.Wait()
	close(stop)
	wg.Wait()
	if users, _ := s.Users(ctx, "a"); len(users) != 9 {
		t.Errorf("%d users, want 9", len(users))
	}
}

func TestTenantsCreatedTime(t *testing.T) {
	ctx := context.Background()
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s, _, err := Open(Config{Dir: t.TempDir(), RootAccessKey: "root-ak", RootSecretKey: "root-secret", Now: func() time.Time { return when }})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.CreateAccount(ctx, "a")
	s.CreateUser(ctx, "a", "u", false)
	users, _ := s.Users(ctx, "a")
	if !a.Created.Equal(when) || !users[0].Created.Equal(when) {
		t.Errorf("created %v and %v, want %v", a.Created, users[0].Created, when)
	}
}

func TestTenantsGivenKeys(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	if _, err := s.CreateAccount(ctx, "test"); err != nil {
		t.Fatal(err)
	}
	// tempauth-style keys: the access key is "account:user", the secrets short words.
	creds, err := s.CreateUserWithKeys(ctx, "test", "tester", true, GivenKeys{AccessKey: "test:tester", SecretKey: "testing", SwiftKey: "testing"})
	if err != nil {
		t.Fatal(err)
	}
	if creds.AccessKey != "test:tester" || creds.SecretKey != "testing" || creds.SwiftKey != "testing" {
		t.Fatalf("given keys not kept: %+v", creds)
	}
	// Only the access key given: the secrets are generated.
	c2, err := s.CreateUserWithKeys(ctx, "test", "tester2", false, GivenKeys{AccessKey: "test:tester2"})
	if err != nil || len(c2.SecretKey) != secretKeyLen || len(c2.SwiftKey) != swiftKeyLen {
		t.Fatalf("partly given keys: %+v, %v", c2, err)
	}
	for _, tc := range []struct {
		name  string
		user  string
		given GivenKeys
		want  error
	}{
		{"access key taken", "u1", GivenKeys{AccessKey: "test:tester"}, ErrKeyExists},
		{"root's access key", "u2", GivenKeys{AccessKey: "root-ak"}, ErrKeyExists},
		{"slash in access key", "u3", GivenKeys{AccessKey: "a/b"}, ErrInvalidKey},
		{"space in access key", "u4", GivenKeys{AccessKey: "a b c"}, ErrInvalidKey},
		{"short access key", "u5", GivenKeys{AccessKey: "ab"}, ErrInvalidKey},
		{"short secret", "u6", GivenKeys{SecretKey: "12345"}, ErrInvalidKey},
		{"short Swift key", "u7", GivenKeys{SwiftKey: "12345"}, ErrInvalidKey},
		{"long secret", "u8", GivenKeys{SecretKey: strings.Repeat("s", 129)}, ErrInvalidKey},
		{"control character", "u9", GivenKeys{SwiftKey: "abc\ndefg"}, ErrInvalidKey},
	} {
		if _, err := s.CreateUserWithKeys(ctx, "test", tc.user, false, tc.given); !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
		if _, err := s.Users(ctx, "test"); err != nil {
			t.Fatal(err)
		}
	}
	users, _ := s.Users(ctx, "test")
	if len(users) != 2 {
		t.Errorf("refused users were stored: %+v", users)
	}
	// Given keys survive a reopen and authenticate.
	s2 := openTest(t, dir)
	if k, err := s2.Lookup(ctx, "test:tester"); err != nil || k.SecretKey != "testing" || k.User != "tester" {
		t.Fatalf("Lookup after reopen = %+v, %v", k, err)
	}
	if _, err := s2.AuthenticateSwift(ctx, "test", "tester", "testing"); err != nil {
		t.Fatalf("Swift auth with a given key: %v", err)
	}
}
