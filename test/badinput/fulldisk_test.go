package badinput

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/test/e2e"
)

// mountTmpfs mounts a tmpfs of the given size on a fresh directory and unmounts it when the test
// ends; it skips the test when that is impossible (not root, no mount permission).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("full-disk test: needs root to mount a small tmpfs for the data directory")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("full-disk test: cannot mount a tmpfs on %s: %v %s", dir, err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// TestFullDisk fills a 400 MiB file system with the real server on it until the engine refuses
// writes that would eat into its reserve (256 MiB by default). The refusal is a clean 507
// InsufficientStorage for PUT, overwrite and UploadPart, leaving no temp file; every object
// acknowledged before reads back byte for byte, also after a restart on the full disk; deletes
// still work and free space so that writes resume; the process survives throughout.
func TestFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("full-disk test: slow, skipped with -short")
	}
	mnt := mountTmpfs(t, "400m")
	data := filepath.Join(mnt, "data")
	// The real binary: running out of space must not take the process down (Pebble exits the
	// process on a failed WAL write, which is what the reserve prevents).
	proc := e2e.Start(t, e2e.Options{DataDir: data, AccessKey: accessKey, SecretKey: secretKey})
	s := attach(t, proc.Endpoint, data)
	const bucket = "full"
	s.createBucket(bucket)

	const objSize = 2 * MiB
	acked := map[string]string{} // key -> sha256 of what was acknowledged
	var refused response
	for i := 0; ; i++ {
		if i > 400<<20/objSize {
			t.Fatalf("%d PUTs of %d bytes on a 400 MiB file system and none refused", i, objSize)
		}
		key := fmt.Sprintf("fill-%04d", i)
		body := randomBytes(objSize)
		r := s.call(http.MethodPut, bucket, key, "", body)
		if r.Status != http.StatusOK {
			refused = r
			s.expectNoKey("the refused PUT", bucket, key)
			break
		}
		acked[key] = sha256Hex(body)
	}
	t.Logf("%d objects of %d bytes stored before the first refusal", len(acked), objSize)
	if len(acked) < 40 {
		t.Errorf("only %d objects of %d bytes fit on a 400 MiB file system with a 256 MiB reserve", len(acked), objSize)
	}
	expectError(t, "PUT on a full disk", refused, http.StatusInsufficientStorage, "InsufficientStorage")

	// Further writes are refused the same way; nothing they touch changes.
	r := s.call(http.MethodPut, bucket, "fill-0000", "", randomBytes(objSize))
	expectError(t, "overwriting PUT on a full disk", r, http.StatusInsufficientStorage, "InsufficientStorage")
	r = s.call(http.MethodPut, bucket, "copy", "", nil, "X-Amz-Copy-Source", "/"+bucket+"/fill-0001")
	expectError(t, "CopyObject on a full disk", r, http.StatusInsufficientStorage, "InsufficientStorage")
	r = s.call(http.MethodPost, bucket, "mp", "uploads", nil)
	if uploadID := between(string(r.Body), "<UploadId>", "</UploadId>"); r.Status == http.StatusOK && uploadID != "" {
		r = s.call(http.MethodPut, bucket, "mp", "partNumber=1&uploadId="+uploadID, randomBytes(objSize))
		expectError(t, "UploadPart on a full disk", r, http.StatusInsufficientStorage, "InsufficientStorage")
		if r := s.call(http.MethodDelete, bucket, "mp", "uploadId="+uploadID, nil); r.Status != http.StatusNoContent {
			t.Errorf("AbortMultipartUpload on a full disk: %s", r)
		}
	} else {
		expectError(t, "CreateMultipartUpload on a full disk", r, http.StatusInsufficientStorage, "InsufficientStorage")
	}

	verify := func(when string) {
		t.Helper()
		got := s.snapshot(bucket)
		for k, h := range acked {
			if got[k] != h {
				t.Errorf("%s: acknowledged object %s reads back wrong or not at all", when, k)
			}
		}
		for k := range got {
			if _, ok := acked[k]; !ok {
				t.Errorf("%s: %s is listed but was never acknowledged", when, k)
			}
		}
		if tmp := s.tmpFiles(); len(tmp) != 0 {
			t.Errorf("%s: temp files left: %v", when, tmp)
		}
	}
	verify("on the full disk")
	if proc.Exited() {
		t.Fatalf("the server exited on a full disk:\n%s", proc.LogTail(40))
	}

	// A restart on the full disk loses nothing.
	if err := proc.Stop(30 * time.Second); err != nil {
		t.Errorf("stopping the server on a full disk: %v", err)
	}
	proc = e2e.Start(t, e2e.Options{DataDir: data, AccessKey: accessKey, SecretKey: secretKey})
	s = attach(t, proc.Endpoint, data)
	verify("after a restart on the full disk")

	// Deletes work on a full disk, and the space they free takes writes again.
	deleted := 0
	for k := range acked {
		if deleted == 10 {
			break
		}
		if r := s.call(http.MethodDelete, bucket, k, "", nil); r.Status != http.StatusNoContent {
			t.Fatalf("DELETE %s on a full disk: %s", k, r)
		}
		delete(acked, k)
		deleted++
	}
	// The engine samples free space at most every 50 ms: poll, with a bound only as a safety net.
	body := randomBytes(objSize)
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := s.call(http.MethodPut, bucket, "after-delete", "", body)
		if r.Status == http.StatusOK {
			acked["after-delete"] = sha256Hex(body)
			break
		}
		expectError(t, "PUT after deleting", r, http.StatusInsufficientStorage, "InsufficientStorage")
		if time.Now().After(deadline) {
			t.Fatalf("writes did not resume within 30s of deleting %d objects of %d bytes", deleted, objSize)
		}
		time.Sleep(20 * time.Millisecond)
	}
	verify("after deleting and writing again")
	if proc.Exited() {
		t.Fatalf("the server exited:\n%s", proc.LogTail(40))
	}
}
