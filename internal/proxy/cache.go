package proxy

import (
	"sync"
	"time"
)

// containerCache remembers for a short while which containers exist, so that an object PUT does
// not read the container's record (and usage) every time; Swift's proxy keeps the same facts in
// memcache. Only positive answers are cached: a container created elsewhere is seen at once,
// one deleted elsewhere may still accept writes for up to the TTL, as in Swift.
type containerCache struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[containerKey]time.Time // expiry
}

type containerKey struct{ account, container string }

// maxCachedContainers bounds the cache's memory; when full it is simply emptied.
const maxCachedContainers = 100_000

func newContainerCache(ttl time.Duration) *containerCache {
	return &containerCache{ttl: ttl, m: map[containerKey]time.Time{}}
}

func (c *containerCache) exists(account, container string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	exp, ok := c.m[containerKey{account, container}]
	return ok && now.Before(exp)
}

func (c *containerCache) remember(account, container string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCachedContainers {
		clear(c.m)
	}
	c.m[containerKey{account, container}] = now.Add(c.ttl)
}

func (c *containerCache) forget(account, container string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, containerKey{account, container})
}
