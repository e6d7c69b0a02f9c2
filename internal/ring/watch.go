package ring

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultReloadInterval is how often a Watcher looks at its file unless told otherwise (Swift's
// rings look every 15 seconds too).
const DefaultReloadInterval = 15 * time.Second

// Watcher holds the current ring of one ring file and replaces it when the file changes, so
// that a running server follows `cairn ring write` without a restart. A changed file is read
// when its size or modification time changes, and swapped in when its bytes differ and it
// loads (checksums verified); a file that does not load is logged once and the current ring
// kept.
type Watcher struct {
	path     string
	interval time.Duration
	log      *slog.Logger
	cur      atomic.Pointer[Ring]

	mu      sync.Mutex // one Check at a time; guards the fields below
	size    int64
	mtime   time.Time
	sum     [sha256.Size]byte // of the bytes of the current ring's file
	badSum  [sha256.Size]byte // of the last bytes that did not load (logged once)
	lastErr string            // the last stat or read error logged
}

// NewWatcher loads the ring file at path, which must load. interval is how often Run looks
// (DefaultReloadInterval when 0 or less); log receives reloads and refusals (nil: discarded).
func NewWatcher(path string, interval time.Duration, log *slog.Logger) (*Watcher, error) {
	if interval <= 0 {
		interval = DefaultReloadInterval
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Watcher{path: path, interval: interval, log: log}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("ring: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ring: %w", err)
	}
	r, err := loadBytes(path, data)
	if err != nil {
		return nil, err
	}
	w.cur.Store(r)
	w.size, w.mtime, w.sum = fi.Size(), fi.ModTime(), sha256.Sum256(data)
	return w, nil
}

// Current is the ring in force. Callers keep the pointer for one request at most, so that a
// reload takes effect everywhere soon.
func (w *Watcher) Current() *Ring { return w.cur.Load() }

// Path is the ring file watched.
func (w *Watcher) Path() string { return w.path }

// Check looks at the file once and swaps in a changed ring that loads. It reports whether the
// ring changed, and why a changed file was not taken.
func (w *Watcher) Check() (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fi, err := os.Stat(w.path)
	if err != nil {
		return false, w.refuse(fmt.Errorf("ring: %w", err))
	}
	if fi.Size() == w.size && fi.ModTime().Equal(w.mtime) {
		return false, nil
	}
	data, err := os.ReadFile(w.path)
	if err != nil {
		return false, w.refuse(fmt.Errorf("ring: %w", err))
	}
	w.lastErr = ""
	w.size, w.mtime = int64(len(data)), fi.ModTime()
	sum := sha256.Sum256(data)
	if sum == w.sum {
		return false, nil // touched, not changed
	}
	r, err := loadBytes(w.path, data)
	if err != nil {
		if sum != w.badSum {
			w.badSum = sum
			w.log.Warn("ring file changed but does not load; keeping the ring in force", "path", w.path, "version", w.Current().Version, "err", err)
		}
		return false, err
	}
	old := w.cur.Swap(r)
	w.sum = sum
	w.log.Info("ring reloaded", "path", w.path, "version", r.Version, "previous_version", old.Version, "checksum", r.Checksum())
	return true, nil
}

// refuse logs a stat or read error once (until it changes) and returns it.
func (w *Watcher) refuse(err error) error {
	if err.Error() != w.lastErr {
		w.lastErr = err.Error()
		w.log.Warn("cannot read ring file; keeping the ring in force", "path", w.path, "err", err)
	}
	return err
}

// Run checks the file every interval until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.Check()
		}
	}
}
