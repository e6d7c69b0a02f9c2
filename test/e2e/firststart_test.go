package e2e

import (
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The server's wording for generated credentials is its own; these accept the usual spellings
// ("access key: X", "AWS_ACCESS_KEY_ID=X", "root secret key = X", ...).
var (
	accessKeyRe = regexp.MustCompile(`(?i)access[ _-]?key(?:[ _-]?id)?["']?\s*[:=]\s*["']?([A-Za-z0-9+/=_.-]{8,})`)
	secretKeyRe = regexp.MustCompile(`(?i)secret[ _-]?(?:access[ _-]?)?key["']?\s*[:=]\s*["']?([A-Za-z0-9+/=_.-]{8,})`)
)

func TestFirstStartGeneratesCredentials(t *testing.T) {
	dataDir := t.TempDir()
	srv := Start(t, Options{DataDir: dataDir, NoKeys: true})
	out := srv.Output()
	ak := accessKeyRe.FindStringSubmatch(out)
	sk := secretKeyRe.FindStringSubmatch(out)
	if ak == nil || sk == nil {
		t.Fatalf("first start on an empty data dir printed no generated root credentials; output:\n%s", out)
	}
	srv.AccessKey, srv.SecretKey = ak[1], sk[1]
	ctx := Context(t)
	if _, err := srv.S3Client(NoRetries).ListBuckets(ctx, &s3.ListBucketsInput{}); err != nil {
		t.Fatalf("the printed credentials (%s / %s…) do not work: %v", ak[1], sk[1][:4], err)
	}
	bucket := newBucket(t, ctx, srv.S3Client(), "first")

	// The secret is stored in the data dir, readable by the owner only.
	var holders []string
	err := filepath.WalkDir(dataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil || info.Size() > 1<<20 {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), sk[1]) {
			holders = append(holders, p)
			if perm := info.Mode().Perm(); perm&0o077 != 0 {
				t.Errorf("%s holds the root secret with mode %v, want 0600", p, perm)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(holders) == 0 {
		t.Errorf("no file under the data dir holds the generated secret in plain form")
	} else {
		t.Logf("credentials stored in %v", holders)
	}

	// Restart: the same credentials work and are not printed again.
	if err := srv.Stop(StopTimeout); err != nil {
		t.Logf("stop: %v", err)
	}
	again := Start(t, Options{DataDir: dataDir, NoKeys: true})
	if strings.Contains(again.Output(), sk[1]) {
		t.Errorf("restart printed the root secret again")
	}
	again.AccessKey, again.SecretKey = ak[1], sk[1]
	if _, err := again.S3Client(NoRetries).HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &bucket}); err != nil {
		t.Errorf("after restart, the stored credentials or the bucket do not work: %v", err)
	}
}

func TestKeyFlagsAndEnvironment(t *testing.T) {
	// Keys given by environment instead of flags.
	ak, sk := "ENVKEY"+strings.ToUpper(RandomKey(6)), RandomKey(20)
	srv := Start(t, Options{NoKeys: true, Env: []string{"CAIRN_ROOT_ACCESS_KEY=" + ak, "CAIRN_ROOT_SECRET_KEY=" + sk}})
	if strings.Contains(srv.Output(), sk) {
		t.Errorf("server printed a secret key it was given")
	}
	srv.AccessKey, srv.SecretKey = ak, sk
	ctx := Context(t)
	if _, err := srv.S3Client(NoRetries).ListBuckets(ctx, &s3.ListBucketsInput{}); err != nil {
		t.Errorf("keys from CAIRN_ROOT_ACCESS_KEY/CAIRN_ROOT_SECRET_KEY do not work: %v", err)
	}
}

func TestHealthAndMetrics(t *testing.T) {
	srv := StartServer(t, t.TempDir())
	for _, c := range []struct{ path, want string }{{"/healthz", ""}, {"/metrics", "# TYPE "}} {
		resp, err := http.Get(srv.Endpoint + c.path)
		if err != nil {
			t.Fatalf("GET %s: %v", c.path, err)
		}
		b, _ := ReadAllClose(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), c.want) {
			t.Errorf("GET %s: %s, body %.200q; want 200 with %q", c.path, resp.Status, b, c.want)
		}
	}
	// SIGTERM shuts the server down cleanly: exit status 0. A server that hung on its open
	// connections until its shutdown grace period ran out would exit non-zero, however fast the
	// machine, so the bound on the wait is only a safety net.
	if err := srv.Stop(StopTimeout); err != nil {
		t.Errorf("after SIGTERM: %v", err)
	}
}
