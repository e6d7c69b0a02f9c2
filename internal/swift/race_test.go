package swift_test

import (
	"bytes"
	"sync"
	"testing"
)

// Racing creates with If-None-Match: * all pass the early check (nothing exists when their
// headers arrive); the commit decides, so exactly one gets 201 and the others 412.
func TestSwiftPutIfNoneMatchRace(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", nil, "", 201)
	for round := range 5 {
		path := "/box/race-" + string(rune('a'+round))
		const writers = 8
		statuses := make([]int, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, _ := c.do("PUT", path, map[string]string{"If-None-Match": "*"}, bytes.NewReader(bytes.Repeat([]byte{byte(i)}, 512<<10)))
				statuses[i] = resp.StatusCode
			}()
		}
		wg.Wait()
		created := 0
		for _, st := range statuses {
			switch st {
			case 201:
				created++
			case 412:
			default:
				t.Fatalf("round %d: statuses %v", round, statuses)
			}
		}
		if created != 1 {
			t.Fatalf("round %d: %d creates succeeded (%v), want 1", round, created, statuses)
		}
	}
}
