package auth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
)

// memBlob is a Blob in memory with the cluster's compare-and-swap, shared by the stores of a
// test as the cluster's object is by proxies.
type memBlob struct {
	mu      sync.Mutex
	data    []byte
	version string // "" while there is no object
	writes  int
	heads   int
	// stale, when set, is what reads return instead of the object (a replica that missed the
	// last writes).
	stale *memCopy
	// unknown writes, while above 0, are answered ErrBlobUnknown (one each): made when
	// unknownMade, not made otherwise.
	unknown     int
	unknownMade bool
	// staleLoads, while above 0, are reads answered with staleCopy (one each).
	staleLoads int
	staleCopy  memCopy
}

type memCopy struct {
	data    []byte
	version string
}

func (b *memBlob) Load(context.Context) ([]byte, string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stale != nil {
		return bytes.Clone(b.stale.data), b.stale.version, nil
	}
	if b.staleLoads > 0 {
		b.staleLoads--
		return bytes.Clone(b.staleCopy.data), b.staleCopy.version, nil
	}
	if b.version == "" {
		return nil, "", fmt.Errorf("mem: %w", ErrBlobNotFound)
	}
	return bytes.Clone(b.data), b.version, nil
}

func (b *memBlob) Version(context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.heads++
	if b.stale != nil {
		return b.stale.version, nil
	}
	if b.version == "" {
		return "", fmt.Errorf("mem: %w", ErrBlobNotFound)
	}
	return b.version, nil
}

func (b *memBlob) Store(_ context.Context, data []byte, ifVersion string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ifVersion != b.version {
		return "", fmt.Errorf("mem: version %q, not %q: %w", b.version, ifVersion, ErrBlobConflict)
	}
	if b.unknown > 0 {
		b.unknown--
		if !b.unknownMade {
			return "", fmt.Errorf("mem: no answer: %w", ErrBlobUnknown)
		}
		b.writes++
		b.data, b.version = bytes.Clone(data), "v"+strconv.Itoa(b.writes)
		return "", fmt.Errorf("mem: the answer was lost: %w", ErrBlobUnknown)
	}
	b.writes++
	b.data, b.version = bytes.Clone(data), "v"+strconv.Itoa(b.writes)
	return b.version, nil
}

func (b *memBlob) snapshot() memCopy {
	b.mu.Lock()
	defer b.mu.Unlock()
	return memCopy{bytes.Clone(b.data), b.version}
}

const testClusterSecret = "cluster secret for the tenant tests"

func openClusterTest(t *testing.T, b Blob, secret string) *Store {
	t.Helper()
	s, err := OpenCluster(context.Background(), Config{RootAccessKey: "root-ak", RootSecretKey: "root-secret"},
		ClusterConfig{Blob: b, Secret: []byte(secret), PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// A user made through one proxy authenticates through another, for S3 and Swift; its key
// rotated or the user deleted through the first, the old keys stop working through the other.
func TestClusterStoresShareUsers(t *testing.T) {
	ctx := context.Background()
	blob := &memBlob{}
	a, b := openClusterTest(t, blob, testClusterSecret), openClusterTest(t, blob, testClusterSecret)
	if _, err := a.CreateAccount(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	creds, err := a.CreateUser(ctx, "acme", "bob", false)
	if err != nil {
		t.Fatal(err)
	}
	// b has not refreshed: the unknown key makes it look at the cluster.
	k, err := b.Lookup(ctx, creds.AccessKey)
	if err != nil || k.SecretKey != creds.SecretKey || k.Account != "acme" || k.User != "bob" {
		t.Fatalf("Lookup on the other store = %+v, %v", k, err)
	}
	id, err := b.AuthenticateSwift(ctx, "acme", "bob", creds.SwiftKey)
	if err != nil || id != (Identity{Account: "acme", User: "bob"}) {
		t.Fatalf("AuthenticateSwift on the other store = %+v, %v", id, err)
	}
	_, fpA, err := a.SwiftKeyFingerprint(ctx, "acme", "bob")
	if err != nil {
		t.Fatal(err)
	}
	_, fpB, err := b.SwiftKeyFingerprint(ctx, "acme", "bob")
	if err != nil || !bytes.Equal(fpA, fpB) {
		t.Fatalf("fingerprints differ between stores: %x, %x (%v)", fpA, fpB, err)
	}
	if !bytes.Equal(a.SwiftTokenKey(), b.SwiftTokenKey()) || len(a.SwiftTokenKey()) != tokenKeyLen {
		t.Fatal("the stores of one cluster have different Swift token keys")
	}

	rotated, err := a.RotateKeys(ctx, "acme", "bob")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lookup(ctx, creds.AccessKey); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("rotated access key on the other store: %v", err)
	}
	if _, err := b.AuthenticateSwift(ctx, "acme", "bob", creds.SwiftKey); !errors.Is(err, ErrBadSwiftKey) {
		t.Errorf("rotated Swift key on the other store: %v", err)
	}
	if _, fp, _ := b.SwiftKeyFingerprint(ctx, "acme", "bob"); bytes.Equal(fp, fpA) {
		t.Error("the fingerprint did not change with the key")
	}
	if _, err := b.AuthenticateSwift(ctx, "acme", "bob", rotated.SwiftKey); err != nil {
		t.Errorf("new Swift key on the other store: %v", err)
	}

	if err := a.DeleteUser(ctx, "acme", "bob"); err != nil {
		t.Fatal(err)
	}
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lookup(ctx, rotated.AccessKey); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("deleted user's access key on the other store: %v", err)
	}
	if _, err := b.AuthenticateSwift(ctx, "acme", "bob", rotated.SwiftKey); !errors.Is(err, ErrBadSwiftKey) {
		t.Errorf("deleted user's Swift key on the other store: %v", err)
	}
	if _, _, err := b.SwiftKeyFingerprint(ctx, "acme", "bob"); !errors.Is(err, ErrNoUser) {
		t.Errorf("deleted user's fingerprint on the other store: %v", err)
	}
	// The root key is the operator's, on every proxy, and not in the object.
	if k, err := b.Lookup(ctx, "root-ak"); err != nil || !k.Root {
		t.Errorf("root on the other store: %+v, %v", k, err)
	}
}

// Changes made through two stores that each hold an old state both survive: the second write
// fails its compare-and-swap, and its change is applied again to the state the first wrote.
func TestClusterConcurrentChangesBothSurvive(t *testing.T) {
	ctx := context.Background()
	blob := &memBlob{}
	a, b := openClusterTest(t, blob, testClusterSecret), openClusterTest(t, blob, testClusterSecret)
	if _, err := a.CreateAccount(ctx, "from-a"); err != nil {
		t.Fatal(err)
	}
	// b still holds the state before a's change.
	if _, err := b.CreateAccount(ctx, "from-b"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Account(ctx, "from-a"); err != nil {
		t.Errorf("b's change lost a's: %v", err)
	}
	// Re-applied changes are checked against the state they land on.
	if _, err := a.CreateAccount(ctx, "from-b"); !errors.Is(err, ErrAccountExists) {
		t.Errorf("a stale store created an account that exists: %v", err)
	}

	// Many at once, from both.
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		for name, s := range map[string]*Store{"a": a, "b": b} {
			wg.Go(func() {
				_, err := s.CreateAccount(ctx, fmt.Sprintf("%s-%d", name, i))
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*Store{a, b} {
		if err := s.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		accts, _ := s.Accounts(ctx)
		if len(accts) != 43 { // root, from-a, from-b and 40
			t.Errorf("%d accounts after concurrent creations, want 43", len(accts))
		}
	}
}

// The object is sealed: no secret of a tenant is in it in clear, and a store with another
// secret, or an object with a changed byte, is refused, never read as an empty store.
func TestClusterObjectSealed(t *testing.T) {
	ctx := context.Background()
	blob := &memBlob{}
	a := openClusterTest(t, blob, testClusterSecret)
	if _, err := a.CreateAccount(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	creds, err := a.CreateUser(ctx, "acme", "bob", false)
	if err != nil {
		t.Fatal(err)
	}
	obj := blob.snapshot()
	for _, secret := range []string{creds.SecretKey, creds.SwiftKey, "root-secret", "acme"} {
		if bytes.Contains(obj.data, []byte(secret)) {
			t.Errorf("the object holds %q in clear", secret)
		}
	}

	_, err = OpenCluster(ctx, Config{RootAccessKey: "root-ak", RootSecretKey: "root-secret"},
		ClusterConfig{Blob: blob, Secret: []byte("another cluster secret, as long"), PollInterval: -1})
	if !errors.Is(err, ErrWrongClusterSecret) {
		t.Errorf("another secret: %v", err)
	}
	_, err = OpenCluster(ctx, Config{RootAccessKey: "root-ak", RootSecretKey: "root-secret"},
		ClusterConfig{Blob: blob, Secret: []byte("short"), PollInterval: -1})
	if !errors.Is(err, ErrInvalidKey) {
		t.Errorf("a short secret: %v", err)
	}

	for _, at := range []int{len(sealMagic) + keyIDLen + 3, len(obj.data) / 2, len(obj.data) - 1, 0} {
		tampered := bytes.Clone(obj.data)
		tampered[at] ^= 1
		blob.mu.Lock()
		blob.data = tampered
		blob.mu.Unlock()
		_, err := OpenCluster(ctx, Config{RootAccessKey: "root-ak", RootSecretKey: "root-secret"},
			ClusterConfig{Blob: blob, Secret: []byte(testClusterSecret), PollInterval: -1})
		if !errors.Is(err, ErrTenantsCorrupt) {
			t.Errorf("byte %d changed: %v", at, err)
		}
	}
	// A running store that meets a damaged object keeps the tenants it knows.
	blob.mu.Lock()
	blob.version = "v-damaged"
	blob.mu.Unlock()
	if err := a.Refresh(ctx); !errors.Is(err, ErrTenantsCorrupt) {
		t.Errorf("refresh from a damaged object: %v", err)
	}
	if _, err := a.Lookup(ctx, creds.AccessKey); err != nil {
		t.Errorf("a damaged object made the store forget: %v", err)
	}
	blob.mu.Lock()
	blob.data = nil
	blob.mu.Unlock()
	if err := a.Refresh(ctx); !errors.Is(err, ErrTenantsCorrupt) {
		t.Errorf("refresh from an empty object: %v", err)
	}
}

// Proxies that start together on an empty cluster create one object between them.
func TestClusterBootstrapRace(t *testing.T) {
	blob := &memBlob{}
	stores := make([]*Store, 6)
	errs := make([]error, len(stores))
	var wg sync.WaitGroup
	for i := range stores {
		wg.Go(func() {
			stores[i], errs[i] = OpenCluster(context.Background(), Config{RootAccessKey: "root-ak", RootSecretKey: "root-secret"},
				ClusterConfig{Blob: blob, Secret: []byte(testClusterSecret), PollInterval: -1})
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if blob.writes != 1 {
		t.Errorf("%d writes to create the object, want 1", blob.writes)
	}
	var created time.Time
	for i, s := range stores {
		a, err := s.Account(context.Background(), RootAccount)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && !a.Created.Equal(created) {
			t.Errorf("root account created %v and %v", created, a.Created)
		}
		created = a.Created
	}
}

// A copy older than the state held (read from a replica that missed writes) is not news.
func TestClusterIgnoresOlderCopies(t *testing.T) {
	ctx := context.Background()
	blob := &memBlob{}
	a := openClusterTest(t, blob, testClusterSecret)
	old := blob.snapshot()
	if _, err := a.CreateAccount(ctx, "newer"); err != nil {
		t.Fatal(err)
	}
	blob.mu.Lock()
	blob.stale = &old
	blob.mu.Unlock()
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Account(ctx, "newer"); err != nil {
		t.Errorf("an older copy replaced the state: %v", err)
	}
}

// Lookups that find nothing ask the cluster at most once per gap, however many they are.
func TestClusterMissRefreshIsRateLimited(t *testing.T) {
	ctx := context.Background()
	blob := &memBlob{}
	s, err := OpenCluster(ctx, Config{RootAccessKey: "root-ak", RootSecretKey: "root-secret"},
		ClusterConfig{Blob: blob, Secret: []byte(testClusterSecret), PollInterval: -1, MissRefreshGap: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 50 {
		if _, err := s.Lookup(ctx, fmt.Sprintf("unknown-%d", i)); !errors.Is(err, ErrUnknownKey) {
			t.Fatal(err)
		}
		s.AuthenticateSwift(ctx, "nobody", "x", "guess-key")
	}
	if blob.heads != 1 {
		t.Errorf("%d HEADs for 100 failed lookups, want 1", blob.heads)
	}
}

// A store that polls picks up another's change without any lookup asking for it.
func TestClusterPolling(t *testing.T) {
	ctx := context.Background()
	blob := &memBlob{}
	a := openClusterTest(t, blob, testClusterSecret)
	b, err := OpenCluster(ctx, Config{RootAccessKey: "root-ak", RootSecretKey: "root-secret"},
		ClusterConfig{Blob: blob, Secret: []byte(testClusterSecret), PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := a.CreateAccount(ctx, "polled"); err != nil {
		t.Fatal(err)
	}
	// Account does not refresh on a miss: only the poller can bring it. The deadline only
	// keeps a broken poller from hanging the test.
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := b.Account(ctx, "polled"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the poller never brought the other store's change")
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.Close()
	b.Close() // idempotent
}

func TestOpenClusterNeedsTheRootKey(t *testing.T) {
	_, err := OpenCluster(context.Background(), Config{}, ClusterConfig{Blob: &memBlob{}, Secret: []byte(testClusterSecret)})
	if !errors.Is(err, ErrInvalidKey) {
		t.Errorf("no root key: %v", err)
	}
}

// A write whose outcome the cluster could not tell (no answer in time, or proxies racing on
// the object's register) is looked for after a reload: made, the change succeeded, and it is
// not applied twice; not made, it is applied again. Either way the caller is told it
// succeeded, and another store sees it.
func TestClusterWriteOfUnknownOutcome(t *testing.T) {
	ctx := context.Background()
	for _, made := range []bool{true, false} {
		blob := &memBlob{}
		a, b := openClusterTest(t, blob, testClusterSecret), openClusterTest(t, blob, testClusterSecret)
		before := blob.writes
		blob.unknown, blob.unknownMade = 2, made
		if _, err := a.CreateAccount(ctx, "acme"); err != nil {
			t.Fatalf("made %v: %v", made, err)
		}
		// One write made: the first (its answer lost), or the third (after two not made).
		if got := blob.writes - before; got != 1 {
			t.Errorf("made %v: %d writes made, want 1", made, got)
		}
		if err := b.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Account(ctx, "acme"); err != nil {
			t.Errorf("made %v: the account, through the other store: %v", made, err)
		}
		// The change is not made twice: creating it again is refused as a duplicate.
		if _, err := a.CreateAccount(ctx, "acme"); !errors.Is(err, ErrAccountExists) {
			t.Errorf("made %v: creating it again: %v, want ErrAccountExists", made, err)
		}
	}
}

// A change that makes keys answers with the keys of the attempt made, which is not always the
// last: here the first attempt is made but its answer lost, the read after it misses it (a
// replica that has not taken it), the second attempt, with other keys, conflicts with the
// first, and the read after that finds the first made. The keys returned must be the first's.
func TestUnknownOutcomeAnswersWithTheKeysMade(t *testing.T) {
	ctx := context.Background()
	blob := &memBlob{}
	a := openClusterTest(t, blob, testClusterSecret)
	if _, err := a.CreateAccount(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateUser(ctx, "acme", "bob", false); err != nil {
		t.Fatal(err)
	}
	blob.staleCopy, blob.staleLoads = blob.snapshot(), 1
	blob.unknown, blob.unknownMade = 1, true
	creds, err := a.RotateKeys(ctx, "acme", "bob")
	if err != nil {
		t.Fatal(err)
	}
	other := openClusterTest(t, blob, testClusterSecret)
	if k, err := other.Lookup(ctx, creds.AccessKey); err != nil || k.SecretKey != creds.SecretKey {
		t.Fatalf("the keys RotateKeys returned do not work: %+v, %v", k, err)
	}
}

// A change whose every attempt's outcome is unknown is reported as such (the admin API's
// 503), never as refused.
func TestUnknownOutcomeToTheEnd(t *testing.T) {
	ctx := context.Background()
	blob := &memBlob{}
	a := openClusterTest(t, blob, testClusterSecret)
	blob.unknown = maxUpdateAttempts
	if _, err := a.CreateAccount(ctx, "acme"); !errors.Is(err, ErrBlobUnknown) {
		t.Errorf("every attempt unknown: %v, want ErrBlobUnknown", err)
	}
	blob.unknown = 0
	if _, err := a.CreateAccount(ctx, "acme"); err != nil {
		t.Errorf("created after: %v", err)
	}
}
