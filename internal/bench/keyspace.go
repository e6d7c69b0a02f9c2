package bench

import (
	"sync"
	"sync/atomic"
)

// keyspace is the set of object keys a workload works on, and which of them exist right now,
// so that a GET never asks for an object that a DELETE removed or a PUT has not yet written:
// a benchmark that counts its own 404s measures nothing. Object i lives in bucket i mod B
// under ObjectKey(prefix, i).
//
// Each slot holds a small state machine, changed only by compare-and-swap:
//
//	0       absent
//	1       busy: a PUT or DELETE is in flight
//	2 + r   present, with r reads (GET/HEAD) in flight
//
// A PUT or DELETE waits for no reader (it picks another key), and a read never overlaps a
// write of the same key, so every answer is the one the state predicts. Slots are allocated
// in chunks on first use, so that a PUT-only run over a huge key space costs nothing up front.
type keyspace struct {
	n       int64
	buckets []string
	prefix  string

	mu     sync.Mutex // allocates chunks
	chunks []atomic.Pointer[[chunkSlots]atomic.Int32]
	// high is one past the largest index ever present: reads and deletes pick below it, so
	// that a key space only partly written is still read at full speed.
	high    atomic.Int64
	present atomic.Int64
}

const (
	chunkSlots = 1 << 16
	slotAbsent = 0
	slotBusy   = 1
	slotIdle   = 2 // present, no reads in flight
)

func newKeyspace(n int64, buckets []string, prefix string) *keyspace {
	return &keyspace{
		n: n, buckets: buckets, prefix: prefix,
		chunks: make([]atomic.Pointer[[chunkSlots]atomic.Int32], (n+chunkSlots-1)/chunkSlots),
	}
}

// bucketKey names object i.
func (k *keyspace) bucketKey(i int64) (string, string) {
	return k.buckets[i%int64(len(k.buckets))], ObjectKey(k.prefix, i)
}

func (k *keyspace) slot(i int64) *atomic.Int32 {
	c := &k.chunks[i/chunkSlots]
	p := c.Load()
	if p == nil {
		k.mu.Lock()
		if p = c.Load(); p == nil {
			p = new([chunkSlots]atomic.Int32)
			c.Store(p)
		}
		k.mu.Unlock()
	}
	return &p[i%chunkSlots]
}

// readIndex maps a picked index onto the part of the key space ever written.
func (k *keyspace) readIndex(i int64) int64 {
	h := k.high.Load()
	if h <= 0 {
		return -1
	}
	return i % h
}

// acquireRead starts a read of object i if it is present.
func (k *keyspace) acquireRead(i int64) bool {
	s := k.slot(i)
	for {
		v := s.Load()
		if v < slotIdle {
			return false
		}
		if s.CompareAndSwap(v, v+1) {
			return true
		}
	}
}

func (k *keyspace) releaseRead(i int64) { k.slot(i).Add(-1) }

// acquireWrite claims object i for a PUT (present=false: it may be absent or present) or a
// DELETE (present=true: it must be present). It returns the state to restore if the request
// fails.
func (k *keyspace) acquireWrite(i int64, mustBePresent bool) (prev int32, ok bool) {
	s := k.slot(i)
	if s.CompareAndSwap(slotIdle, slotBusy) {
		return slotIdle, true
	}
	if !mustBePresent && s.CompareAndSwap(slotAbsent, slotBusy) {
		return slotAbsent, true
	}
	return 0, false
}

// releaseWrite ends a PUT or DELETE of object i: nowPresent says what the store holds now.
func (k *keyspace) releaseWrite(i int64, prev int32, nowPresent bool) {
	s := k.slot(i)
	if nowPresent {
		s.Store(slotIdle)
		if prev == slotAbsent {
			k.present.Add(1)
		}
		for {
			h := k.high.Load()
			if i < h || k.high.CompareAndSwap(h, i+1) {
				break
			}
		}
		return
	}
	s.Store(slotAbsent)
	if prev == slotIdle {
		k.present.Add(-1)
	}
}

// markAllPresent declares every object written (by an earlier run: --skip-prepare).
func (k *keyspace) markAllPresent() {
	for i := range k.n {
		k.slot(i).Store(slotIdle)
	}
	k.present.Store(k.n)
	k.high.Store(k.n)
}
