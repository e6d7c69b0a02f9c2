package auth

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Account is a tenant: a namespace of containers and the users that act in it. Quotas are kept
// here and enforced by whoever writes data (0: no limit).
type Account struct {
	Name         string            `json:"name"`
	Created      time.Time         `json:"created"`
	QuotaBytes   int64             `json:"quota_bytes"`
	QuotaObjects int64             `json:"quota_objects"`
	Metadata     map[string]string `json:"metadata,omitempty"`
	Users        int               `json:"users"` // how many users the account has
}

// User is a user of an account, without its secrets.
type User struct {
	Account   string    `json:"account"`
	User      string    `json:"user"`
	Admin     bool      `json:"admin"`
	Root      bool      `json:"root,omitempty"` // the server's root user (account root only)
	AccessKey string    `json:"access_key"`     // an identifier, as AWS shows it; not a secret
	Created   time.Time `json:"created"`
}

// UserCredentials are a user's keys, returned when they are made (CreateUser, RotateKeys) and
// never again.
type UserCredentials struct {
	Account   string `json:"account"`
	User      string `json:"user"`
	Admin     bool   `json:"admin"`
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key"`
	SwiftKey  string `json:"swift_key"`
}

// maxUpdateAttempts bounds how often a change is applied again after another writer changed
// the stored state under it (only a cluster's state has other writers). Each conflict is another
// writer's success, and a proxy writing a run of changes wins every race against one that must
// reload first, so a change can lose once for each change of another proxy's run: eight was
// too few for two proxies creating ten accounts each on a loaded machine.
const maxUpdateAttempts = 64

// update applies change to a copy of the current state, writes it and only then makes it the
// state lookups see: a change that cannot be made durable is not made at all. When another
// proxy changed the cluster's state since this one read it, the write is refused (compare and
// swap), and change is applied again to the state as it now is, so that neither change is lost
// and each is checked against the other (two creations of one account: the second fails). A
// write whose outcome is unknown (the cluster did not answer in time, or racing proxies left
// the object's register unable to tell) is looked for after a reload, by the name each write
// leaves among the state's recent writes: found, the change was made; not found, it is
// applied again to the state as it is, as after a conflict. (A write found neither made nor
// refused there is not made later: the next write replaces the version it was conditioned on,
// and the object's register orders the two.)
func (s *Store) update(ctx context.Context, change func(st *state) error) error {
	_, err := s.updateAttempts(ctx, change)
	return err
}

// updateAttempts is update, and says which attempt's change was made (0: the first): change
// runs once an attempt, and a change that makes values (keys) must answer with those of the
// attempt made, which is not always the last (its outcome was unknown, a later one conflicted
// with it, and it was found made).
func (s *Store) updateAttempts(ctx context.Context, change func(st *state) error) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	// A change is checked against the state as the cluster has it now, not as this proxy last
	// polled it: an account just created through another proxy must be found.
	if err := s.Refresh(ctx); err != nil {
		return 0, err
	}
	var ours []string // this change's writes, one an attempt
	unknown := false  // some attempt's outcome was not known
	for attempt := 1; ; attempt++ {
		base := s.current()
		if made := base.madeBy(ours); made >= 0 {
			return made, nil // an attempt whose outcome was unknown was made (and is installed)
		}
		next := base.state.clone()
		if err := change(next); err != nil {
			return 0, err
		}
		id := newWriteID()
		ours = append(ours, id)
		sv, err := s.backend.save(ctx, next, base, id)
		unknown = unknown || errors.Is(err, ErrBlobUnknown)
		if (errors.Is(err, ErrBlobConflict) || errors.Is(err, ErrBlobUnknown)) && attempt < maxUpdateAttempts {
			rerr := s.reloadAfterConflict(ctx, attempt)
			if rerr == nil {
				continue
			}
			if !unknown {
				return 0, rerr
			}
			err = rerr
		}
		if err != nil {
			if unknown {
				return s.lastLook(ctx, ours, err)
			}
			return 0, err
		}
		snap := newSnapshot(next, s.root, s.cfg.Logger)
		snap.version, snap.generation, snap.writes = sv.version, sv.generation, sv.writes
		s.install(snap, true)
		return attempt - 1, nil
	}
}

// lastLook is a change's way out when it failed after an attempt whose outcome was unknown:
// the cluster is read once more (twice, a moment apart, if the first read fails), and an
// attempt found made is the change's success; otherwise the error says the outcome is unknown
// (the admin API's 503), never that the change was refused.
func (s *Store) lastLook(ctx context.Context, ours []string, cause error) (int, error) {
	for try := range 2 {
		if try > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
		if err := s.reload(ctx); err == nil {
			if made := s.current().madeBy(ours); made >= 0 {
				return made, nil
			}
			break
		}
	}
	if errors.Is(cause, ErrBlobUnknown) {
		return 0, cause
	}
	return 0, fmt.Errorf("%w (an earlier attempt's outcome is unknown: %w)", cause, ErrBlobUnknown)
}

// install makes snap the state lookups see, unless it is older than the one they see: a
// writer's own change replaces a snapshot of the same generation, a reload only a different
// one (a stale replica's copy of the cluster's object is older, and ignored). It reports
// whether snap was installed.
func (s *Store) install(snap *snapshot, written bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.snap
	if cur != nil {
		if snap.generation < cur.generation {
			return false
		}
		if !written && snap.generation == cur.generation && snap.version == cur.version {
			return false
		}
	}
	s.snap = snap
	return true
}

func accountOf(name string, a *accountRecord) Account {
	return Account{Name: name, Created: a.Created, QuotaBytes: a.QuotaBytes, QuotaObjects: a.QuotaObjects,
		Metadata: maps.Clone(a.Metadata), Users: len(a.Users) + rootUsers(name)}
}

// rootUsers counts the root user, who belongs to the root account without a record.
func rootUsers(account string) int {
	if account == RootAccount {
		return 1
	}
	return 0
}

// CreateAccount creates an account with no users and no quota.
func (s *Store) CreateAccount(ctx context.Context, name string) (Account, error) {
	if err := validName("account", name); err != nil {
		return Account{}, fmt.Errorf("auth: create account: %w", err)
	}
	var outs []Account // one an attempt
	made, err := s.updateAttempts(ctx, func(st *state) error {
		if _, ok := st.Accounts[name]; ok {
			return fmt.Errorf("auth: create account %q: %w", name, ErrAccountExists)
		}
		a := &accountRecord{Created: s.cfg.Now().UTC(), Users: map[string]*userRecord{}}
		st.Accounts[name] = a
		outs = append(outs, accountOf(name, a))
		return nil
	})
	if err != nil {
		return Account{}, err
	}
	return outs[made], nil
}

// Account returns an account.
func (s *Store) Account(ctx context.Context, name string) (Account, error) {
	if err := ctx.Err(); err != nil {
		return Account{}, err
	}
	a, ok := s.current().state.Accounts[name]
	if !ok {
		return Account{}, fmt.Errorf("auth: account %q: %w", name, ErrNoAccount)
	}
	return accountOf(name, a), nil
}

// Accounts returns every account, root included, in name order.
func (s *Store) Accounts(ctx context.Context) ([]Account, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// An administrator's listing shows the cluster's state as it is now (see update).
	if err := s.Refresh(ctx); err != nil {
		return nil, err
	}
	st := s.current().state
	out := make([]Account, 0, len(st.Accounts))
	for _, name := range slices.Sorted(maps.Keys(st.Accounts)) {
		out = append(out, accountOf(name, st.Accounts[name]))
	}
	return out, nil
}

// DeleteAccount deletes an account that has no users left. Whether it still holds data is for
// the caller to check first (the store knows nothing of containers); once its users are gone
// nobody but the root key can add any.
func (s *Store) DeleteAccount(ctx context.Context, name string) error {
	if name == RootAccount {
		return fmt.Errorf("auth: delete account %q: %w", name, ErrRootAccount)
	}
	return s.update(ctx, func(st *state) error {
		a, ok := st.Accounts[name]
		if !ok {
			return fmt.Errorf("auth: delete account %q: %w", name, ErrNoAccount)
		}
		if len(a.Users) > 0 {
			return fmt.Errorf("auth: delete account %q: %d users: %w", name, len(a.Users), ErrAccountNotEmpty)
		}
		delete(st.Accounts, name)
		return nil
	})
}

// SetQuota sets an account's quota in bytes and objects (0: no limit).
func (s *Store) SetQuota(ctx context.Context, account string, bytes, objects int64) error {
	if bytes < 0 || objects < 0 {
		return fmt.Errorf("auth: quota of %q: %d bytes, %d objects: negative: %w", account, bytes, objects, ErrInvalidQuota)
	}
	return s.update(ctx, func(st *state) error {
		a, ok := st.Accounts[account]
		if !ok {
			return fmt.Errorf("auth: quota of %q: %w", account, ErrNoAccount)
		}
		a.QuotaBytes, a.QuotaObjects = bytes, objects
		return nil
	})
}

// UpdateMetadata changes an account's metadata as Swift's POST does: each entry is set, and an
// empty value removes its name. It returns the account as changed.
func (s *Store) UpdateMetadata(ctx context.Context, account string, changes map[string]string) (Account, error) {
	var outs []Account // one an attempt
	made, err := s.updateAttempts(ctx, func(st *state) error {
		a, ok := st.Accounts[account]
		if !ok {
			return fmt.Errorf("auth: metadata of %q: %w", account, ErrNoAccount)
		}
		for k, v := range changes {
			if v == "" {
				delete(a.Metadata, k)
				continue
			}
			if a.Metadata == nil {
				a.Metadata = map[string]string{}
			}
			a.Metadata[k] = v
		}
		if len(a.Metadata) == 0 {
			a.Metadata = nil
		}
		outs = append(outs, accountOf(account, a))
		return nil
	})
	if err != nil {
		return Account{}, err
	}
	return outs[made], nil
}

// newKeys generates a user's keys, with an access key no other key has.
func newKeys(st *state, root Key) (access, secret, swift string) {
	for {
		access = "CAIRN" + randomString(accessKeyLen, accessAlphabet)
		if access != root.AccessKey && !accessKeyUsed(st, access) {
			break
		}
	}
	return access, randomString(secretKeyLen, secretAlphabet), randomString(swiftKeyLen, swiftAlphabet)
}

func accessKeyUsed(st *state, access string) bool {
	for _, a := range st.Accounts {
		for _, u := range a.Users {
			if u.AccessKey == access {
				return true
			}
		}
	}
	return false
}

func credentialsOf(account, user string, u *userRecord) UserCredentials {
	return UserCredentials{Account: account, User: user, Admin: u.Admin, AccessKey: u.AccessKey, SecretKey: u.SecretKey, SwiftKey: u.SwiftKey}
}

// CreateUser adds a user to an account with freshly generated keys. admin makes it an
// administrator of its account.
func (s *Store) CreateUser(ctx context.Context, account, user string, admin bool) (UserCredentials, error) {
	return s.CreateUserWithKeys(ctx, account, user, admin, GivenKeys{})
}

// GivenKeys are keys an operator chooses for a new user instead of generated ones, e.g. to
// move users from another store whose clients keep their keys. Empty fields are generated.
type GivenKeys struct {
	AccessKey, SecretKey, SwiftKey string
}

// Limits of given keys. Generated keys are far longer; these admit keys other stores hand out
// (tempauth keys are often short words) while refusing the trivially guessable.
const (
	minGivenSecret = 6
	maxKeyLength   = 128
)

func (g GivenKeys) validate() error {
	if g.AccessKey != "" {
		if len(g.AccessKey) < 3 || len(g.AccessKey) > maxKeyLength {
			return fmt.Errorf("auth: access key must be 3 to %d characters: %w", maxKeyLength, ErrInvalidKey)
		}
		// The access key travels in SigV4's Credential field ("AK/date/region/service/...")
		// and in headers: no slash, no space or control character, no comma.
		for _, c := range g.AccessKey {
			if c <= ' ' || c > '~' || c == '/' || c == ',' || c == '=' {
				return fmt.Errorf("auth: access key %q has a character that is not allowed (printable ASCII without space, '/', ',' or '='): %w", g.AccessKey, ErrInvalidKey)
			}
		}
	}
	for _, k := range []struct{ name, v string }{{"secret key", g.SecretKey}, {"Swift key", g.SwiftKey}} {
		if k.v == "" {
			continue
		}
		if len(k.v) < minGivenSecret || len(k.v) > maxKeyLength {
			return fmt.Errorf("auth: %s must be %d to %d characters: %w", k.name, minGivenSecret, maxKeyLength, ErrInvalidKey)
		}
		for _, c := range k.v {
			if c < ' ' || c > '~' {
				return fmt.Errorf("auth: %s must be printable ASCII: %w", k.name, ErrInvalidKey)
			}
		}
	}
	return nil
}

// CreateUserWithKeys adds a user with the given keys, generating those not given. A given
// access key that another user (or the root) has is ErrKeyExists.
func (s *Store) CreateUserWithKeys(ctx context.Context, account, user string, admin bool, given GivenKeys) (UserCredentials, error) {
	if err := validName("user", user); err != nil {
		return UserCredentials{}, fmt.Errorf("auth: create user: %w", err)
	}
	if err := given.validate(); err != nil {
		return UserCredentials{}, fmt.Errorf("auth: create user %s:%s: %w", account, user, err)
	}
	var outs []UserCredentials // one an attempt: the keys of the attempt made are the user's
	made, err := s.updateAttempts(ctx, func(st *state) error {
		a, ok := st.Accounts[account]
		if !ok {
			return fmt.Errorf("auth: create user %s:%s: %w", account, user, ErrNoAccount)
		}
		if _, ok := a.Users[user]; ok || (account == RootAccount && user == RootUser) {
			return fmt.Errorf("auth: create user %s:%s: %w", account, user, ErrUserExists)
		}
		if given.AccessKey != "" && (given.AccessKey == s.root.AccessKey || accessKeyUsed(st, given.AccessKey)) {
			return fmt.Errorf("auth: create user %s:%s: access key %q: %w", account, user, given.AccessKey, ErrKeyExists)
		}
		u := &userRecord{Admin: admin, Created: s.cfg.Now().UTC()}
		u.AccessKey, u.SecretKey, u.SwiftKey = newKeys(st, s.root)
		if given.AccessKey != "" {
			u.AccessKey = given.AccessKey
		}
		if given.SecretKey != "" {
			u.SecretKey = given.SecretKey
		}
		if given.SwiftKey != "" {
			u.SwiftKey = given.SwiftKey
		}
		a.Users[user] = u
		outs = append(outs, credentialsOf(account, user, u))
		return nil
	})
	if err != nil {
		return UserCredentials{}, err
	}
	return outs[made], nil
}

// Users returns an account's users in name order, without secrets; the root account lists the
// root user too.
func (s *Store) Users(ctx context.Context, account string) ([]User, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// An administrator's listing shows the cluster's state as it is now (see update).
	if err := s.Refresh(ctx); err != nil {
		return nil, err
	}
	a, ok := s.current().state.Accounts[account]
	if !ok {
		return nil, fmt.Errorf("auth: users of %q: %w", account, ErrNoAccount)
	}
	out := make([]User, 0, len(a.Users)+1)
	if account == RootAccount {
		out = append(out, User{Account: RootAccount, User: RootUser, Admin: true, Root: true, AccessKey: s.root.AccessKey, Created: a.Created})
	}
	for _, name := range slices.Sorted(maps.Keys(a.Users)) {
		u := a.Users[name]
		out = append(out, User{Account: account, User: name, Admin: u.Admin, AccessKey: u.AccessKey, Created: u.Created})
	}
	slices.SortFunc(out, func(x, y User) int { return strings.Compare(x.User, y.User) })
	return out, nil
}

// DeleteUser deletes a user; its keys stop working at once.
func (s *Store) DeleteUser(ctx context.Context, account, user string) error {
	if account == RootAccount && user == RootUser {
		return fmt.Errorf("auth: delete user %s:%s: %w", account, user, ErrRootAccount)
	}
	return s.update(ctx, func(st *state) error {
		a, ok := st.Accounts[account]
		if !ok {
			return fmt.Errorf("auth: delete user %s:%s: %w", account, user, ErrNoAccount)
		}
		if _, ok := a.Users[user]; !ok {
			return fmt.Errorf("auth: delete user %s:%s: %w", account, user, ErrNoUser)
		}
		delete(a.Users, user)
		return nil
	})
}

// RotateKeys replaces all of a user's keys (S3 pair and Swift key); the old ones stop working
// at once, and so do the Swift tokens issued for the old Swift key (they are bound to its
// fingerprint: SwiftKeyFingerprint).
func (s *Store) RotateKeys(ctx context.Context, account, user string) (UserCredentials, error) {
	if account == RootAccount && user == RootUser {
		return UserCredentials{}, fmt.Errorf("auth: rotate keys of %s:%s (set the root key by flags or in %s): %w", account, user, credentialsFile, ErrRootAccount)
	}
	var outs []UserCredentials // one an attempt: the keys of the attempt made are the user's
	made, err := s.updateAttempts(ctx, func(st *state) error {
		a, ok := st.Accounts[account]
		if !ok {
			return fmt.Errorf("auth: rotate keys of %s:%s: %w", account, user, ErrNoAccount)
		}
		u, ok := a.Users[user]
		if !ok {
			return fmt.Errorf("auth: rotate keys of %s:%s: %w", account, user, ErrNoUser)
		}
		u.AccessKey, u.SecretKey, u.SwiftKey = newKeys(st, s.root)
		outs = append(outs, credentialsOf(account, user, u))
		return nil
	})
	if err != nil {
		return UserCredentials{}, err
	}
	return outs[made], nil
}
