package badinput

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/server"
)

// The operator's mistake of issue 12: stop the server, move the device's index away, start it.
// The server must refuse to start with a message that names the missing index, and must not
// touch a data file; with the index back every object reads as before.
func TestServerRefusesADeviceWhoseIndexIsMissing(t *testing.T) {
	s := startServer(t, "")
	const bucket = "identity"
	s.createBucket(bucket)
	want := map[string][]byte{}
	for _, key := range []string{"a", "b", "c"} {
		want[key] = randomBytes(300 * KiB) // data files, not inline
		s.put(bucket, key, want[key])
	}
	s.stop()
	before := dataFiles(t, filepath.Join(s.data, "devices", "d0", "objects"))

	lsm := filepath.Join(s.data, "devices", "d0", "lsm")
	away := filepath.Join(t.TempDir(), "lsm")
	if err := os.Rename(lsm, away); err != nil {
		t.Fatal(err)
	}
	_, err := server.Start(server.Config{DataDir: s.data, Listen: "127.0.0.1:0", RootAccessKey: accessKey, RootSecretKey: secretKey})
	if err == nil || !strings.Contains(err.Error(), "index is missing") {
		t.Fatalf("start without the index: %v, want a refusal naming the missing index", err)
	}
	after := dataFiles(t, filepath.Join(s.data, "devices", "d0", "objects"))
	if strings.Join(before, ",") != strings.Join(after, ",") {
		t.Fatalf("data files changed by the refused start:\nbefore %v\nafter  %v", before, after)
	}

	os.RemoveAll(lsm)
	if err := os.Rename(away, lsm); err != nil {
		t.Fatal(err)
	}
	s.start()
	for key, data := range want {
		s.expectObject("after the index came back", bucket, key, data)
	}
	if r := s.call(http.MethodGet, bucket, "", "", nil); r.Status != http.StatusOK {
		t.Fatalf("listing: %s", r)
	}
}

// An index on its own directory (--index-dir): forgetting the flag on a restart, or pointing it
// at another server's index, refuses to start; the right one serves the objects.
func TestServerWithASeparateIndex(t *testing.T) {
	data, fast := filepath.Join(t.TempDir(), "data"), filepath.Join(t.TempDir(), "fast-lsm")
	cfg := server.Config{DataDir: data, Listen: "127.0.0.1:0", RootAccessKey: accessKey, RootSecretKey: secretKey, IndexDir: fast}
	srv, err := server.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{t: t, data: data, endpoint: srv.Endpoint(), host: strings.TrimPrefix(srv.Endpoint(), "http://"), client: newClient()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	s.createBucket("fast")
	body := randomBytes(200 * KiB)
	s.put("fast", "obj", body)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(data, "devices", "d0", "lsm")); !os.IsNotExist(err) {
		t.Fatalf("an LSM was made in the data directory: %v", err)
	}

	noFlag := cfg
	noFlag.IndexDir = ""
	if _, err := server.Start(noFlag); err == nil || !strings.Contains(err.Error(), "index is missing") {
		t.Fatalf("restart without --index-dir: %v, want a refusal", err)
	}
	other := cfg
	other.DataDir = filepath.Join(t.TempDir(), "other")
	if _, err := server.Start(other); err == nil || !strings.Contains(err.Error(), "device") {
		t.Fatalf("another data directory on this index: %v, want a refusal", err)
	}

	srv, err = server.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	go func() { done <- srv.Serve(ctx) }()
	s.endpoint, s.host = srv.Endpoint(), strings.TrimPrefix(srv.Endpoint(), "http://")
	s.expectObject("with its index", "fast", "obj", body)
	cancel()
	<-done
}
