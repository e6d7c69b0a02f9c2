package badinput

import (
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Racing conditional PUTs: every writer passes the early check (nothing exists, or the version
// it names is current, when its headers arrive); the storage engine decides in the commit, so
// exactly one wins and every other gets 412 PreconditionFailed.
func TestConditionalPutRace(t *testing.T) {
	s := startServer(t, "")
	const bucket = "condrace"
	s.createBucket(bucket)
	race := func(what, key string, hdr ...string) {
		t.Helper()
		const writers = 8
		answers := make([]response, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = s.call(http.MethodPut, bucket, key, "", randomBytes(512*KiB), hdr...)
			}()
		}
		wg.Wait()
		won := 0
		for _, a := range answers {
			switch {
			case a.Status == http.StatusOK:
				won++
			case a.Status != http.StatusPreconditionFailed || a.Code != "PreconditionFailed":
				t.Fatalf("%s: %s", what, a)
			}
		}
		if won != 1 {
			t.Fatalf("%s: %d writers succeeded, want 1", what, won)
		}
	}
	for i := range 3 {
		key := "created-" + strings.Repeat("x", i)
		race("If-None-Match: *", key, "If-None-Match", "*")
		cur := s.call(http.MethodHead, bucket, key, "", nil)
		race("If-Match", key, "If-Match", cur.Header.Get("ETag"))
	}
}
