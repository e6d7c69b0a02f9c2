package proxy

import (
	"testing"
	"time"
)

// A lookup that saw the container before it was deleted must not cache it after the delete.
func TestContainerCacheIgnoresAnswersOlderThanAForget(t *testing.T) {
	c := newContainerCache(time.Minute)
	now := time.Now()
	exists := func(at time.Time) bool { _, ok := c.lookup("a", "b", at); return ok }
	gen := c.generation() // a HEAD starts and sees the container...
	c.forget("a", "b")    // ...while a DELETE removes it
	c.remember("a", "b", 0, now, gen)
	if exists(now) {
		t.Fatal("a deleted container was cached by a lookup that started before the delete")
	}
	c.remember("a", "b", 2, now, c.generation())
	if !exists(now) || exists(now.Add(2*time.Minute)) {
		t.Fatal("a fresh answer is not cached for exactly its TTL")
	}
	if p, _ := c.lookup("a", "b", now); p != 2 {
		t.Fatalf("cached policy %d, want 2", p)
	}
}
