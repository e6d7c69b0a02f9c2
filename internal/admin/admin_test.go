package admin_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/auth"
	"github.com/cairn-store/cairn/internal/objclient"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
	"github.com/cairn-store/cairn/internal/server"
	"github.com/cairn-store/cairn/internal/testserver"
)

const (
	rootAK = "admin-test-root"
	rootSK = "admin-test-root-secret"
)

// start runs a real server in the test process and returns its endpoint.
func start(t *testing.T) string { return testserver.Start(t, rootAK, rootSK) }

func rootClient(t *testing.T, endpoint string) *admin.Client {
	t.Helper()
	c, err := admin.NewClient(admin.ClientConfig{Endpoint: endpoint, AccessKey: rootAK, SecretKey: rootSK})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func s3Client(t *testing.T, endpoint, ak, sk string) objclient.Client {
	t.Helper()
	c, err := objclient.New(objclient.Config{Endpoint: endpoint, AccessKey: ak, SecretKey: sk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// wantAPIError checks that err is the API's answer with the given status and code.
func wantAPIError(t *testing.T, what string, err error, status int, code string) {
	t.Helper()
	var ae *admin.Error
	if !errors.As(err, &ae) || ae.Status != status || ae.Code != code {
		t.Errorf("%s: %v; want %d %s", what, err, status, code)
	}
}

func httpStatus(err error) int {
	var oe *objclient.Error
	if errors.As(err, &oe) {
		return oe.Status
	}
	return 0
}

func TestAdminAccountsAndUsers(t *testing.T) {
	ctx := context.Background()
	endpoint := start(t)
	c := rootClient(t, endpoint)

	a, err := c.CreateAccount(ctx, "acme")
	if err != nil || a.Name != "acme" || a.Created.IsZero() {
		t.Fatalf("CreateAccount = %+v, %v", a, err)
	}
	_, err = c.CreateAccount(ctx, "acme")
	wantAPIError(t, "duplicate account", err, 409, admin.CodeAccountExists)
	_, err = c.CreateAccount(ctx, "bad name")
	wantAPIError(t, "invalid account name", err, 400, admin.CodeInvalidArgument)
	_, err = c.Account(ctx, "nope")
	wantAPIError(t, "missing account", err, 404, admin.CodeNoSuchAccount)
	accts, err := c.Accounts(ctx)
	if err != nil || len(accts) != 2 || accts[0].Name != "acme" || accts[1].Name != auth.RootAccount {
		t.Fatalf("Accounts = %+v, %v", accts, err)
	}

	creds, err := c.CreateUser(ctx, "acme", "bob", true)
	if err != nil || creds.Account != "acme" || creds.User != "bob" || !creds.Admin || creds.SecretKey == "" || creds.SwiftKey == "" {
		t.Fatalf("CreateUser = %+v, %v", creds, err)
	}
	_, err = c.CreateUser(ctx, "acme", "bob", false)
	wantAPIError(t, "duplicate user", err, 409, admin.CodeUserExists)
	_, err = c.CreateUser(ctx, "nope", "bob", false)
	wantAPIError(t, "user of a missing account", err, 404, admin.CodeNoSuchAccount)
	_, err = c.CreateUser(ctx, "acme", "a:b", false)
	wantAPIError(t, "invalid user name", err, 400, admin.CodeInvalidArgument)
	users, err := c.Users(ctx, "acme")
	if err != nil || len(users) != 1 || users[0].User != "bob" || users[0].AccessKey != creds.AccessKey {
		t.Fatalf("Users = %+v, %v", users, err)
	}

	// The user's S3 key acts for its account, and usage shows what it stored.
	u, err := c.Usage(ctx, "acme")
	if err != nil || u.Usage != (admin.Usage{}) {
		t.Fatalf("usage of a new account = %+v, %v", u, err)
	}
	bob := s3Client(t, endpoint, creds.AccessKey, creds.SecretKey)
	if err := bob.CreateBucket(ctx, "photos"); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Put(ctx, "photos", "cat.jpg", strings.NewReader("meow meow"), 9, objclient.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	u, err = c.Usage(ctx, "acme")
	if err != nil || u.Usage != (admin.Usage{Bytes: 9, Objects: 1, Containers: 1}) {
		t.Fatalf("usage = %+v, %v", u, err)
	}

	// Quotas: one limit can change alone; negative is refused.
	ten := int64(10 << 30)
	if a, err = c.SetQuota(ctx, "acme", &ten, nil); err != nil || a.QuotaBytes != ten || a.QuotaObjects != 0 {
		t.Fatalf("SetQuota(bytes) = %+v, %v", a, err)
	}
	n := int64(500)
	if a, err = c.SetQuota(ctx, "acme", nil, &n); err != nil || a.QuotaBytes != ten || a.QuotaObjects != 500 {
		t.Fatalf("SetQuota(objects) = %+v, %v", a, err)
	}
	neg := int64(-1)
	_, err = c.SetQuota(ctx, "acme", &neg, nil)
	wantAPIError(t, "negative quota", err, 400, admin.CodeInvalidArgument)
	if u, _ = c.Usage(ctx, "acme"); u.QuotaBytes != ten || u.QuotaObjects != 500 {
		t.Errorf("usage does not show the quota: %+v", u)
	}

	// Rotation: the old key stops working at once, the new one works.
	nu, err := c.RotateKeys(ctx, "acme", "bob")
	if err != nil || nu.AccessKey == creds.AccessKey {
		t.Fatalf("RotateKeys = %+v, %v", nu, err)
	}
	if _, err := bob.ListBuckets(ctx); httpStatus(err) != 403 {
		t.Errorf("old key after rotation: %v; want 403", err)
	}
	bob2 := s3Client(t, endpoint, nu.AccessKey, nu.SecretKey)
	if names, err := bob2.ListBuckets(ctx); err != nil || !slices.Equal(names, []string{"photos"}) {
		t.Errorf("new key: %v, %v", names, err)
	}
	_, err = c.RotateKeys(ctx, "acme", "nobody")
	wantAPIError(t, "rotate a missing user", err, 404, admin.CodeNoSuchUser)

	// Deletion: not while users or data remain.
	err = c.DeleteAccount(ctx, "acme")
	wantAPIError(t, "delete an account holding data", err, 409, admin.CodeAccountNotEmpty)
	if err := bob2.Delete(ctx, "photos", "cat.jpg"); err != nil {
		t.Fatal(err)
	}
	if err := bob2.DeleteBucket(ctx, "photos"); err != nil {
		t.Fatal(err)
	}
	err = c.DeleteAccount(ctx, "acme")
	wantAPIError(t, "delete an account with users", err, 409, admin.CodeAccountNotEmpty)
	if err := c.DeleteUser(ctx, "acme", "bob"); err != nil {
		t.Fatal(err)
	}
	err = c.DeleteUser(ctx, "acme", "bob")
	wantAPIError(t, "delete a deleted user", err, 404, admin.CodeNoSuchUser)
	if _, err := bob2.ListBuckets(ctx); httpStatus(err) != 403 {
		t.Errorf("key of a deleted user: %v; want 403", err)
	}
	if err := c.DeleteAccount(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	err = c.DeleteAccount(ctx, auth.RootAccount)
	wantAPIError(t, "delete the root account", err, 400, admin.CodeInvalidArgument)
}

// Two accounts never see each other's buckets, even of the same name: bucket names are per
// account.
func TestAdminTenantIsolation(t *testing.T) {
	ctx := context.Background()
	endpoint := start(t)
	c := rootClient(t, endpoint)
	var keys [2]auth.UserCredentials
	for i, name := range []string{"alpha", "beta"} {
		if _, err := c.CreateAccount(ctx, name); err != nil {
			t.Fatal(err)
		}
		var err error
		if keys[i], err = c.CreateUser(ctx, name, "u", true); err != nil {
			t.Fatal(err)
		}
	}
	a := s3Client(t, endpoint, keys[0].AccessKey, keys[0].SecretKey)
	b := s3Client(t, endpoint, keys[1].AccessKey, keys[1].SecretKey)
	if err := a.CreateBucket(ctx, "data"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Put(ctx, "data", "secret.txt", strings.NewReader("alpha's"), 7, objclient.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if names, err := b.ListBuckets(ctx); err != nil || len(names) != 0 {
		t.Errorf("beta's ListBuckets = %v, %v; want none", names, err)
	}
	if _, err := b.Get(ctx, "data", "secret.txt", objclient.GetOptions{}); httpStatus(err) != 404 {
		t.Errorf("beta reads alpha's object: %v; want 404", err)
	}
	if _, err := b.Head(ctx, "data", "secret.txt"); httpStatus(err) != 404 {
		t.Errorf("beta heads alpha's object: %v; want 404", err)
	}
	if _, err := b.List(ctx, "data", objclient.ListOptions{}); httpStatus(err) != 404 {
		t.Errorf("beta lists alpha's bucket: %v; want 404", err)
	}
	// The same name in beta is beta's own, empty bucket.
	if err := b.CreateBucket(ctx, "data"); err != nil {
		t.Fatal(err)
	}
	if page, err := b.List(ctx, "data", objclient.ListOptions{}); err != nil || len(page.Objects) != 0 {
		t.Errorf("beta's bucket data: %+v, %v; want empty", page, err)
	}
	if err := b.Delete(ctx, "data", "secret.txt"); err != nil {
		t.Fatal(err)
	}
	if info, err := a.Head(ctx, "data", "secret.txt"); err != nil || info.Size != 7 {
		t.Errorf("alpha's object after beta's delete: %+v, %v", info, err)
	}
	// Root acts for the root account, which has neither bucket.
	root := s3Client(t, endpoint, rootAK, rootSK)
	if names, err := root.ListBuckets(ctx); err != nil || len(names) != 0 {
		t.Errorf("root's ListBuckets = %v, %v", names, err)
	}
}

// raw sends a request signed by cred (or unsigned, for a zero cred) and returns the status and
// the decoded error document.
func raw(t *testing.T, req *http.Request, cred *sigv4.Credential, body []byte) (int, admin.ErrorBody) {
	t.Helper()
	if cred != nil {
		if err := sigv4.SignRequest(req, *cred, "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if body != nil {
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var eb admin.ErrorBody
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		if err := json.Unmarshal(data, &eb); err != nil || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %s with a body that is not a JSON error: %q", req.Method, req.URL.Path, resp.Status, data)
		}
	}
	return resp.StatusCode, eb
}

func TestAdminOnlyRoot(t *testing.T) {
	ctx := context.Background()
	endpoint := start(t)
	c := rootClient(t, endpoint)
	if _, err := c.CreateAccount(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	user, err := c.CreateUser(ctx, "acme", "boss", true)
	if err != nil {
		t.Fatal(err)
	}
	root := &sigv4.Credential{AccessKey: rootAK, SecretKey: rootSK}
	get := func() *http.Request {
		r, _ := http.NewRequest(http.MethodGet, endpoint+"/admin/v1/accounts", nil)
		return r
	}
	for _, tc := range []struct {
		name string
		req  *http.Request
		cred *sigv4.Credential
	}{
		{"unsigned", get(), nil},
		{"an account admin's key", get(), &sigv4.Credential{AccessKey: user.AccessKey, SecretKey: user.SecretKey}},
		{"the root access key with a wrong secret", get(), &sigv4.Credential{AccessKey: rootAK, SecretKey: "not-the-secret"}},
		{"an unknown key", get(), &sigv4.Credential{AccessKey: "CAIRNNOBODY", SecretKey: "whatever-secret"}},
	} {
		status, eb := raw(t, tc.req, tc.cred, nil)
		if status != 403 || eb.Code != admin.CodeAccessDenied {
			t.Errorf("%s: %d %+v; want 403 AccessDenied", tc.name, status, eb)
		}
		if strings.Contains(eb.Error, rootSK) || strings.Contains(eb.Error, user.SecretKey) {
			t.Errorf("%s: the error repeats a secret: %q", tc.name, eb.Error)
		}
	}

	// A presigned URL of the root key is not accepted either.
	u, err := sigv4.Presign(get(), *root, "us-east-1", time.Now(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	pr, _ := http.NewRequest(http.MethodGet, u, nil)
	if status, eb := raw(t, pr, nil, nil); status != 403 || eb.Code != admin.CodeAccessDenied {
		t.Errorf("presigned: %d %+v", status, eb)
	}

	// A body that is not the one signed is refused before it is acted on.
	signed := []byte(`{"name":"signed"}`)
	r, _ := http.NewRequest(http.MethodPost, endpoint+"/admin/v1/accounts", nil)
	r.Header.Set("X-Amz-Content-Sha256", sha256Hex(signed))
	if status, eb := raw(t, r, root, []byte(`{"name":"forged"}`)); status != 403 || eb.Code != admin.CodeAccessDenied {
		t.Errorf("forged body: %d %+v", status, eb)
	}
	if _, err := c.Account(ctx, "forged"); err == nil {
		t.Error("the forged body created its account")
	}

	// Malformed requests from root get JSON errors too.
	for _, tc := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"GET", "/admin/v1/nothing", "", 404, admin.CodeNotFound},
		{"GET", "/admin/v1/accounts/acme/users/boss/keys/x/y", "", 404, admin.CodeNotFound},
		{"PATCH", "/admin/v1/accounts", "", 405, admin.CodeMethodNotAllowed},
		{"POST", "/admin/v1/accounts", `{"name":`, 400, admin.CodeInvalidArgument},
		{"POST", "/admin/v1/accounts", `{"name":"x","extra":1}`, 400, admin.CodeInvalidArgument},
		{"GET", "/admin/v1/accounts/acme/users/nobody", "", 404, admin.CodeNoSuchUser},
		{"GET", "/admin/v1/accounts/nope/usage", "", 404, admin.CodeNoSuchAccount},
	} {
		r, _ := http.NewRequest(tc.method, endpoint+tc.path, nil)
		r.Header.Set("X-Amz-Content-Sha256", sha256Hex([]byte(tc.body)))
		if status, eb := raw(t, r, root, []byte(tc.body)); status != tc.status || eb.Code != tc.code {
			t.Errorf("%s %s %q: %d %+v; want %d %s", tc.method, tc.path, tc.body, status, eb, tc.status, tc.code)
		}
	}

	// A client pointed at something that is not the admin API says so.
	other, _ := admin.NewClient(admin.ClientConfig{Endpoint: endpoint + "/elsewhere", AccessKey: rootAK, SecretKey: rootSK})
	if _, err := other.Accounts(ctx); !errors.Is(err, admin.ErrNotAdminAPI) {
		t.Errorf("wrong endpoint: %v", err)
	}
}

// The admin prefix belongs to S3 on virtual-hosted requests: a bucket's key "admin/v1/x" stays
// reachable.
func TestAdminVirtualHostedStaysS3(t *testing.T) {
	ctx := context.Background()
	s, err := server.Start(server.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", RootAccessKey: rootAK, RootSecretKey: rootSK,
		Domains: []string{"s3.test"}})
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Serve(sctx) }()
	defer func() { cancel(); <-done }()
	root := s3Client(t, s.Endpoint(), rootAK, rootSK)
	if err := root.CreateBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Put(ctx, "bkt", "admin/v1/accounts", strings.NewReader("x"), 1, objclient.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	r, _ := http.NewRequest(http.MethodGet, s.Endpoint()+"/admin/v1/accounts", nil)
	r.Host = "bkt.s3.test"
	if err := sigv4.SignRequest(r, sigv4.Credential{AccessKey: rootAK, SecretKey: rootSK}, "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "x" {
		t.Errorf("virtual-hosted GET of key admin/v1/accounts: %s %q", resp.Status, body)
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
