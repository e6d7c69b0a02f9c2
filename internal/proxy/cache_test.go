package proxy

import (
	"testing"
	"time"
)

// A lookup that saw the container before it was deleted must not cache it after the delete.
func TestContainerCacheIgnoresAnswersOlderThanAForget(t *testing.T) {
	c := newContainerCache(time.Minute)
	now := time.Now()
	gen := c.generation() // a HEAD starts and sees the container...
	c.forget("a", "b")    // ...while a DELETE removes it
	c.remember("a", "b", now, gen)
	if c.exists("a", "b", now) {
		t.Fatal("a deleted container was cached by a lookup that started before the delete")
	}
	c.remember("a", "b", now, c.generation())
	if !c.exists("a", "b", now) || c.exists("a", "b", now.Add(2*time.Minute)) {
		t.Fatal("a fresh answer is not cached for exactly its TTL")
	}
}
