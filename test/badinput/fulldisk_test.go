package badinput

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
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
	next := 0
	// fill PUTs new objects until one is refused, and returns the refusal.
	fill := func() response {
		t.Helper()
		for {
			if next > 400<<20/objSize {
				t.Fatalf("%d PUTs of %d bytes on a 400 MiB file system and none refused", next, objSize)
			}
			key := fmt.Sprintf("fill-%04d", next)
			next++
			body := randomBytes(objSize)
			r := s.call(http.MethodPut, bucket, key, "", body)
			if r.Status != http.StatusOK {
				s.expectNoKey("the refused PUT", bucket, key)
				return r
			}
			acked[key] = sha256Hex(body)
		}
	}
	refused := fill()
	t.Logf("%d objects of %d bytes stored before the first refusal", len(acked), objSize)
	if len(acked) < 30 {
		t.Errorf("only %d objects of %d bytes fit on a 400 MiB file system with a 256 MiB reserve and a 32 MiB ballast", len(acked), objSize)
	}
	expectError(t, "PUT on a full disk", refused, http.StatusInsufficientStorage, "InsufficientStorage")

	// Further writes are refused the same way; nothing they touch changes. The engine's
	// background work (compactions deleting the files they replaced) can free space after a
	// refusal, on a busy machine at any time: a write that then fits is taken, as it should
	// be, and the disk is filled again before the next try. Each write that fits eats into
	// the space left, so this ends.
	// write returns the response and the sha256 of what the key holds if it was taken.
	refusedOnFullDisk := func(what, key string, write func() (response, string)) {
		t.Helper()
		for try := 0; ; try++ {
			r, sum := write()
			if r.Status != http.StatusOK || try == 20 {
				expectError(t, what+" on a full disk", r, http.StatusInsufficientStorage, "InsufficientStorage")
				return
			}
			t.Logf("%s: taken (space freed since the last refusal); filling again", what)
			if key != "" {
				acked[key] = sum
			}
			fill()
		}
	}
	refusedOnFullDisk("overwriting PUT", "fill-0000", func() (response, string) {
		body := randomBytes(objSize)
		return s.call(http.MethodPut, bucket, "fill-0000", "", body), sha256Hex(body)
	})
	refusedOnFullDisk("CopyObject", "copy", func() (response, string) {
		return s.call(http.MethodPut, bucket, "copy", "", nil, "X-Amz-Copy-Source", "/"+bucket+"/fill-0001"), acked["fill-0001"]
	})
	r := s.call(http.MethodPost, bucket, "mp", "uploads", nil)
	if uploadID := between(string(r.Body), "<UploadId>", "</UploadId>"); r.Status == http.StatusOK && uploadID != "" {
		refusedOnFullDisk("UploadPart", "", func() (response, string) {
			return s.call(http.MethodPut, bucket, "mp", "partNumber=1&uploadId="+uploadID, randomBytes(objSize)), ""
		})
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
	if err := proc.Stop(e2e.StopTimeout); err != nil {
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
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r := s.call(http.MethodPut, bucket, "after-delete", "", body)
		if r.Status == http.StatusOK {
			acked["after-delete"] = sha256Hex(body)
			break
		}
		expectError(t, "PUT after deleting", r, http.StatusInsufficientStorage, "InsufficientStorage")
		if time.Now().After(deadline) {
			t.Fatalf("writes did not resume within 2 minutes of deleting %d objects of %d bytes", deleted, objSize)
		}
		time.Sleep(20 * time.Millisecond)
	}
	verify("after deleting and writing again")
	if proc.Exited() {
		t.Fatalf("the server exited:\n%s", proc.LogTail(40))
	}
}

// TestDiskFilledFromOutside: another process fills the file system to the last byte while
// Cairn serves. Writes are refused with 507; deletes go on (the engine gives up its ballast
// file so that the index's write-ahead log can still grow), or are refused with 507 once even
// that room is gone; the process never exits, and once space is freed writes resume and
// every object not deleted reads back. Before the ballast, about 1,300 deletes on such a disk
// took the process down (Pebble exits on a failed WAL write).
func TestDiskFilledFromOutside(t *testing.T) {
	if testing.Short() {
		t.Skip("full-disk test: slow, skipped with -short")
	}
	mnt := mountTmpfs(t, "600m")
	data := filepath.Join(mnt, "data")
	proc := e2e.Start(t, e2e.Options{DataDir: data, AccessKey: accessKey, SecretKey: secretKey})
	s := attach(t, proc.Endpoint, data)
	const bucket = "outside"
	s.createBucket(bucket)

	// Many objects with long names: each delete then writes a few KiB to the WAL.
	const n = 2500
	key := func(i int) string { return fmt.Sprintf("k%05d-%s", i, strings.Repeat("n", 1000)) }
	keys := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range keys {
				if r := s.call(http.MethodPut, bucket, key(i), "", []byte("value")); r.Status != http.StatusOK {
					t.Errorf("PUT %d: %s", i, r)
				}
			}
		}()
	}
	for i := range n {
		keys <- i
	}
	close(keys)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	filler := filepath.Join(mnt, "filler")
	fillUp(t, filler)
	expectError(t, "PUT on a disk filled from outside", s.call(http.MethodPut, bucket, "new", "", []byte("x")), http.StatusInsufficientStorage, "InsufficientStorage")

	deleted := map[int]bool{}
	refused := 0
	for i := range n {
		r := s.call(http.MethodDelete, bucket, key(i), "", nil)
		switch r.Status {
		case http.StatusNoContent:
			deleted[i] = true
		case http.StatusInsufficientStorage:
			refused++
		default:
			if proc.Exited() {
				t.Fatalf("the server exited after %d deletes on a disk filled from outside:\n%s", len(deleted), proc.LogTail(20))
			}
			t.Fatalf("DELETE %d on a disk filled from outside: %s", i, r)
		}
	}
	t.Logf("on the full disk: %d deletes stored, %d refused", len(deleted), refused)
	if proc.Exited() {
		t.Fatalf("the server exited on a disk filled from outside:\n%s", proc.LogTail(20))
	}
	if len(deleted) == 0 {
		t.Fatal("no delete was stored on the full disk: the ballast gave no room")
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute) // a safety net: free space is sampled every 50 ms
	for {
		r := s.call(http.MethodPut, bucket, "after", "", []byte("after"))
		if r.Status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("PUT after the filler was removed: %s", r)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i := range n {
		r := s.call(http.MethodHead, bucket, key(i), "", nil)
		if want := map[bool]int{true: http.StatusNotFound, false: http.StatusOK}[deleted[i]]; r.Status != want {
			t.Fatalf("HEAD %d after the disk was freed: %d, want %d", i, r.Status, want)
		}
	}
	s.expectObject("the PUT after freeing", bucket, "after", []byte("after"))
}

// fillUp writes a file as large as the file system's free space when it begins, so that no
// byte is left, as a copy of a fixed size does. It takes no more than that: the server gives
// up its ballast once free space runs low, and may notice that while the file is still being
// written (the slower the machine, the likelier); a filler that went on until ENOSPC would
// then swallow the ballast too, leaving the deletes no room whatever the server did, which is
// the case the ballast does not claim to cover (a process that keeps filling the disk).
func fillUp(t *testing.T, path string) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(path), &st); err != nil {
		t.Fatal(err)
	}
	left := int64(st.Bavail) * st.Bsize
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for left > 0 {
		n, err := f.Write(buf[:min(int64(len(buf)), left)])
		left -= int64(n)
		if err != nil {
			break // ENOSPC: the server wrote meanwhile, and the disk is full all the same
		}
	}
}
