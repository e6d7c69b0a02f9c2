package auth

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestGeneratedRootKeyIsKeptPrivateAndReused(t *testing.T) {
	dir := t.TempDir()
	s, gen, err := Open(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if gen == nil || len(gen.SecretKey) != 40 || gen.Account != RootAccount {
		t.Fatalf("first start generated %+v", gen)
	}
	st, err := os.Stat(filepath.Join(dir, credentialsFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file mode %v, want 0600", st.Mode().Perm())
	}
	if k, err := s.Lookup(context.Background(), gen.AccessKey); err != nil || k.SecretKey != gen.SecretKey {
		t.Fatalf("Lookup = %+v, %v", k, err)
	}

	s2, gen2, err := Open(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if gen2 != nil {
		t.Fatal("second start generated a new key")
	}
	if k, err := s2.Lookup(context.Background(), gen.AccessKey); err != nil || k.SecretKey != gen.SecretKey {
		t.Fatalf("after restart Lookup = %+v, %v", k, err)
	}

	other := t.TempDir()
	_, gen3, err := Open(Config{Dir: other})
	if err != nil {
		t.Fatal(err)
	}
	if gen3.AccessKey == gen.AccessKey || gen3.SecretKey == gen.SecretKey {
		t.Fatal("two data directories got the same generated key")
	}
}

func TestGivenRootKey(t *testing.T) {
	dir := t.TempDir()
	s, gen, err := Open(Config{Dir: dir, RootAccessKey: "admin", RootSecretKey: "secret-123"})
	if err != nil || gen != nil {
		t.Fatalf("Open = %v, generated %v", err, gen)
	}
	if _, err := os.Stat(filepath.Join(dir, credentialsFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a given key was written to disk")
	}
	if _, err := s.Lookup(context.Background(), "nobody"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("Lookup(nobody) = %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{},
		{Dir: "x", RootAccessKey: "abc"},
		{Dir: "x", RootSecretKey: "abcdefgh"},
		{Dir: "x", RootAccessKey: "ab", RootSecretKey: "abcdefgh"},
		{Dir: "x", RootAccessKey: "abc", RootSecretKey: "short"},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("Validate(%+v) accepted", c)
		}
	}
}

// The embedded default's Swift token key is made once and kept, readable by the owner only,
// so that tokens survive a restart; a file that holds no key stops the store.
func TestSwiftTokenKeyKept(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	key := s.SwiftTokenKey()
	if len(key) != tokenKeyLen {
		t.Fatalf("token key of %d bytes", len(key))
	}
	st, err := os.Stat(filepath.Join(dir, tokenKeyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token key file: %v, %v; want mode 0600", st, err)
	}
	if again := openTest(t, dir).SwiftTokenKey(); !bytes.Equal(again, key) {
		t.Error("the token key changed across a restart")
	}
	if other := openTest(t, t.TempDir()).SwiftTokenKey(); bytes.Equal(other, key) {
		t.Error("two data directories have one token key")
	}
	os.WriteFile(filepath.Join(dir, tokenKeyFile), []byte(`{"key":"abcd"}`), 0o600)
	if _, _, err := Open(Config{Dir: dir, RootAccessKey: "root-ak", RootSecretKey: "root-secret"}); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("a short token key: %v", err)
	}
}
