package index

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// Usage counters are sums of merge operands, so that concurrent PUTs into one container never
// read-modify-write a shared key. The price is paid by readers: a Get merges every operand not
// yet compacted, and a busy container gathers hundreds of thousands of them in the memtable.
// So the index consolidates: after consolidateEvery operands it replaces each counter touched
// with its merged value as a plain Set, which later reads stop at.
//
// A Set must not overtake an operand committed after the value it carries was read, or that
// delta would be lost. Writers therefore hold usageMu for reading from adding their operands
// until their batch commits (HoldUsage), and consolidation holds it for writing.

// consolidateEvery is the number of counter operands after which counters are consolidated:
// small enough that a read merges little, large enough that the brief pause of writers it
// takes is rare.
const consolidateEvery = 1024

type usageState struct {
	mu      sync.RWMutex // see above
	dirtyMu sync.Mutex
	dirty   map[string]struct{}
	ops     int
	running bool
	wg      sync.WaitGroup
	rounds  int // consolidations done, for tests
}

// addUsage adds the usage deltas of one container to b, and to its account's totals when the
// account row is on this device (see account.go); otherwise it notes the container for the
// stats pass. The caller holds HoldUsage until b commits.
func (ix *Index) addUsage(b *pebble.Batch, account, container string, objects, size int64) error {
	if objects == 0 && size == 0 {
		return nil
	}
	key := cstatsKey(account, container)
	if err := b.Merge(key, encodeCounters(objects, size), nil); err != nil {
		return fmt.Errorf("index: usage: %w", err)
	}
	ix.noteOperand(key)
	local, err := ix.localRow(key, account, container)
	if err != nil {
		return err
	}
	if !local {
		ix.changed.note(account, container)
		return nil
	}
	key = astatsKey(account)
	if err := b.Merge(key, encodeCounters(0, objects, size), nil); err != nil {
		return fmt.Errorf("index: usage: %w", err)
	}
	ix.noteOperand(key)
	return nil
}

// exclusiveUsage excludes every writer of usage counters (for a change that must read them
// exactly, or that changes which counters a write feeds) until the returned function runs.
func (ix *Index) exclusiveUsage() (release func()) {
	ix.counterState.mu.Lock()
	return func() {
		ix.counterState.mu.Unlock()
		ix.maybeConsolidate()
	}
}

// HoldUsage must be called before PutEntry or DeleteEntry add to a batch, and the returned
// function once that batch has committed (or been abandoned).
func (ix *Index) HoldUsage() (release func()) {
	ix.counterState.mu.RLock()
	return func() {
		ix.counterState.mu.RUnlock()
		ix.maybeConsolidate()
	}
}

// noteOperand records that key received a merge operand.
func (ix *Index) noteOperand(key []byte) {
	ix.counterState.dirtyMu.Lock()
	if ix.counterState.dirty == nil {
		ix.counterState.dirty = map[string]struct{}{}
	}
	ix.counterState.dirty[string(key)] = struct{}{}
	ix.counterState.ops++
	ix.counterState.dirtyMu.Unlock()
}

func (ix *Index) maybeConsolidate() {
	u := &ix.counterState
	u.dirtyMu.Lock()
	if u.running || u.ops < consolidateEvery {
		u.dirtyMu.Unlock()
		return
	}
	u.running = true
	u.wg.Add(1)
	u.dirtyMu.Unlock()
	go func() {
		defer u.wg.Done()
		if err := ix.consolidate(); err != nil {
			ix.log.Warn("consolidating usage counters", "err", err)
		}
	}()
}

// consolidate replaces every counter that received operands with its merged value.
func (ix *Index) consolidate() error {
	u := &ix.counterState
	u.mu.Lock()
	defer u.mu.Unlock()
	u.dirtyMu.Lock()
	keys := u.dirty
	u.dirty, u.ops = nil, 0
	u.running = false
	u.rounds++
	u.dirtyMu.Unlock()
	b := ix.db.NewBatch()
	defer b.Close()
	for k := range keys {
		v, closer, err := ix.db.Get([]byte(k))
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return storageErr("reading usage", err)
		}
		err = b.Set([]byte(k), v, nil)
		closer.Close()
		if err != nil {
			return storageErr("consolidating usage", err)
		}
	}
	// No sync: if the Set is lost in a crash, the operands it summed are still in the WAL
	// before it, and replay yields the same value.
	return storageErr("consolidating usage", b.Commit(pebble.NoSync))
}

// Close waits for a running consolidation; call it before closing the DB.
func (ix *Index) Close() {
	ix.counterState.wg.Wait()
}
