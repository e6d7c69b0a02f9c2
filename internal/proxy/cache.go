package proxy

import (
	"sync"
	"time"
)

// containerCache remembers for a short while which containers exist, and their storage policy,
// so that an object request does not read the container's record (and usage) every time;
// Swift's proxy keeps the same facts in memcache. Only positive answers are cached: a container created elsewhere is seen at once,
// one deleted elsewhere may still accept writes for up to the TTL, as in Swift.
type containerCache struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[containerKey]cachedContainer
	// gen counts forgets: an answer read before a forget must not be remembered after it (a
	// HEAD that saw the container, racing with its DELETE).
	gen uint64
}

type containerKey struct{ account, container string }

type cachedContainer struct {
	expiry time.Time
	policy int // its storage policy's index
}

// maxCachedContainers bounds the cache's memory; when full it is simply emptied.
const maxCachedContainers = 100_000

func newContainerCache(ttl time.Duration) *containerCache {
	return &containerCache{ttl: ttl, m: map[containerKey]cachedContainer{}}
}

// lookup returns the policy of a container known to exist.
func (c *containerCache) lookup(account, container string, now time.Time) (policy int, ok bool) {
	if c.ttl <= 0 {
		return 0, false // caching is off
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[containerKey{account, container}]
	if !ok || !now.Before(e.expiry) {
		return 0, false
	}
	return e.policy, true
}

// generation returns the current generation, to pass to remember.
func (c *containerCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// remember caches that a container exists in a policy, unless a forget happened since gen was
// read.
func (c *containerCache) remember(account, container string, policy int, now time.Time, gen uint64) {
	if c.ttl <= 0 {
		return // caching is off
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(c.m) >= maxCachedContainers {
		clear(c.m)
	}
	c.m[containerKey{account, container}] = cachedContainer{expiry: now.Add(c.ttl), policy: policy}
}

func (c *containerCache) forget(account, container string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, containerKey{account, container})
	c.gen++
}
