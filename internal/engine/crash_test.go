package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cairn-store/cairn/internal/meta"
)

// version is one write a crash test attempted: a PUT of data, or a tombstone.
type version struct {
	ts   meta.Timestamp
	data []byte // nil: a tombstone
}

// history is what the crash test knows about each name: every version attempted (registered
// before the write starts) and the newest acknowledged (registered after it returned nil).
type history struct {
	mu        sync.Mutex
	attempted map[string]map[meta.Timestamp]version
	acked     map[string]version
}

type snapshot struct {
	attempted map[string]map[meta.Timestamp]version
	acked     map[string]version
}

func (h *history) copyAcked() map[string]version {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := make(map[string]version, len(h.acked))
	for k, v := range h.acked {
		m[k] = v
	}
	return m
}

func (h *history) copyAttempted() map[string]map[meta.Timestamp]version {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := make(map[string]map[meta.Timestamp]version, len(h.attempted))
	for k, vs := range h.attempted {
		m[k] = make(map[meta.Timestamp]version, len(vs))
		for ts, v := range vs {
			m[k][ts] = v
		}
	}
	return m
}

// TestCrash runs puts and deletes of inline and file-sized objects from several goroutines,
// takes crash images of the file system (only synced data, plus a random share of unsynced
// data) at random moments, and checks each image after reopening: every write acknowledged
// before the crash is there byte for byte, whatever else is visible is a complete version that
// was attempted, and no data file or temp file is left without a record.
func TestCrash(t *testing.T) {
	fs := pebblevfs.NewCrashableMem()
	const dir = "/dev0"
	v := &env{t: t, fs: fs, dir: dir, reserve: -1}
	v.open()
	defer v.close()

	h := &history{attempted: map[string]map[meta.Timestamp]version{}, acked: map[string]version{}}
	const workers, namesPerWorker, maxOps = 4, 6, 3000
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 42))
			for range maxOps {
				select {
				case <-stop:
					return
				default:
				}
				// Each worker owns its names, so at most one write per name is in flight.
				obj := fmt.Sprintf("w%d/n%d", w, r.IntN(namesPerWorker))
				ver := version{ts: meta.Now()}
				if r.IntN(5) > 0 {
					var size int
					switch r.IntN(3) {
					case 0:
						size = r.IntN(2000)
					case 1:
						size = 2000 + r.IntN(DefaultInlineThreshold-2000)
					default:
						size = DefaultInlineThreshold + 1 + r.IntN(3*BlockSize)
					}
					ver.data = randBytes(r, size)
				}
				h.mu.Lock()
				if h.attempted[obj] == nil {
					h.attempted[obj] = map[meta.Timestamp]version{}
				}
				h.attempted[obj][ver.ts] = ver
				h.mu.Unlock()
				var err error
				if ver.data != nil {
					_, err = v.e.Put(ctx, name(obj), meta.Object{Timestamp: ver.ts, Size: int64(len(ver.data))}, bytes.NewReader(ver.data), PutOptions{})
				} else {
					err = v.e.Delete(ctx, name(obj), ver.ts, DeleteOptions{})
				}
				if err == nil {
					h.mu.Lock()
					h.acked[obj] = ver
					h.mu.Unlock()
				} else if !errors.Is(err, meta.ErrNotFound) {
					t.Errorf("%s: %v", obj, err)
				}
			}
		}()
	}

	var images []*pebblevfs.MemFS
	var snaps []snapshot
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 8 {
		time.Sleep(time.Duration(1+r.IntN(25)) * time.Millisecond)
		acked := h.copyAcked() // acknowledged before the crash: must survive
		img := fs.CrashClone(pebblevfs.CrashCloneCfg{UnsyncedDataPercent: []int{0, 30, 90}[i%3], RNG: rand.New(rand.NewPCG(uint64(i), 1))})
		images = append(images, img)
		snaps = append(snaps, snapshot{attempted: h.copyAttempted(), acked: acked}) // may be visible
	}
	close(stop)
	wg.Wait()

	for i, img := range images {
		t.Run(fmt.Sprintf("image%d", i), func(t *testing.T) {
			checkImage(t, img, dir, snaps[i])
		})
	}
}

func checkImage(t *testing.T, img *pebblevfs.MemFS, dir string, s snapshot) {
	v := &env{t: t, fs: img, dir: dir, reserve: -1}
	v.open()
	defer v.close()
	acked := 0
	for obj, vs := range s.attempted {
		want, hasAck := s.acked[obj]
		st, err := v.e.Stat(ctx, name(obj))
		if errors.Is(err, meta.ErrNotFound) {
			if hasAck {
				t.Fatalf("%s: acknowledged version %d lost", obj, want.ts)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: stat: %v", obj, err)
		}
		got, ok := vs[st.Timestamp]
		if !ok {
			t.Fatalf("%s: version %d was never written", obj, st.Timestamp)
		}
		if hasAck && st.Timestamp < want.ts {
			t.Fatalf("%s: found version %d older than acknowledged %d", obj, st.Timestamp, want.ts)
		}
		if hasAck && st.Timestamp == want.ts {
			acked++
		}
		if got.data == nil {
			if !st.Deleted {
				t.Fatalf("%s: version %d should be a tombstone", obj, st.Timestamp)
			}
			continue
		}
		r, err := v.e.Get(ctx, name(obj), nil)
		if err != nil {
			t.Fatalf("%s: get: %v", obj, err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(b, got.data) || r.Object.ETag != md5hex(got.data) {
			t.Fatalf("%s: version %d read back wrong (%d of %d bytes, %v)", obj, st.Timestamp, len(b), len(got.data), err)
		}
	}
	// Open collected what interrupted writes left: every data file belongs to a record.
	files := dataFiles(t, v.fs, v.dir)
	live := 0
	for obj := range s.attempted {
		if st, err := v.e.Stat(ctx, name(obj)); err == nil && !st.Deleted && st.Size > DefaultInlineThreshold {
			live++
		}
	}
	if len(files) != live {
		t.Fatalf("%d data files, %d live file-sized objects", len(files), live)
	}
	assertTmpEmpty(t, v)
	t.Logf("%d names, %d writes attempted, %d names at their acknowledged version, %d data files",
		len(s.attempted), attempts(s), acked, len(files))
}

func attempts(s snapshot) int {
	n := 0
	for _, vs := range s.attempted {
		n += len(vs)
	}
	return n
}
