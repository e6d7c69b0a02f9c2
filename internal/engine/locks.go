package engine

import (
	"hash/maphash"
	"sync"

	"github.com/cairn-store/cairn/internal/meta"
)

// The engine's name locks: writers of one name serialize on its stripe; readers take the stripe
// as a read lock while they read a record, so that no read sees a write before it is synced.

// lockStripes is the number of locks names hash onto. Writers of one name must serialize
// around read-old-record + commit; writers of different names must not, or they could not
// share a WAL fsync. 1024 stripes make an unrelated collision rare at any realistic concurrency.
// Readers take a stripe's read lock while they read a record (readRecord): Pebble makes a
// batch visible before its WAL sync returns, and a writer holds its stripe until then.
const lockStripes = 1024

func (e *Engine) lockFor(key []byte) *sync.RWMutex { return &e.locks[e.stripe(key)] }

// readRecord reads key's record with load as a reader must: not while a writer of its stripe is
// between making its batch visible and having it synced (Pebble publishes a batch before its
// WAL sync returns), so that no read returns a write a crash could still take back. The kill -9
// robustness tier found one: a GET answered with a PUT that was never acknowledged, whose
// process was killed before the sync, and the next GET found the name gone.
func (e *Engine) readRecord(key []byte, load func([]byte) (*record, []byte, error)) (*record, []byte, error) {
	mu := e.lockFor(key)
	mu.RLock()
	defer mu.RUnlock()
	return load(key)
}

func (e *Engine) stripe(key []byte) uint64 { return maphash.Bytes(e.seed, key) % lockStripes }

// LockName locks an object's name against every write of it on this engine (the lock its
// writes hold from reading the current version until their batch commits), until unlock. The
// storage node takes it to change the listing entry of the name from elsewhere (a listing
// update from another device, the sweeper) without racing the writes that change it in their
// own batches.
func (e *Engine) LockName(name meta.ObjectName) (unlock func()) {
	mu := e.lockFor(objectKey(nil, name))
	mu.Lock()
	return mu.Unlock
}
