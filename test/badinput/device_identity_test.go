package badinput

import (
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
