package engine

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/vfs"
)

// Concurrent uploads hold the space they will use from before their bodies arrive: with room
// for two 4 MiB objects above the reserve, of four slow uploads two are admitted and two are
// refused at once, although all four saw the same free-space sample. Released holds let later
// uploads in.
func TestSpaceIsReservedByUploadsInFlight(t *testing.T) {
	ffs := vfs.NewFaulty(vfs.Default)
	v := newEnv(t, ffs, "")
	const reserve, size = 1 << 20, 4 << 20
	v.reserve = reserve
	v.reopen()
	ffs.SetFilter(func(string) bool { return false }) // writes are real; only the reported free space is small
	ffs.SetWriteLimit(reserve + 2*size + 2*size/3)
	ffs.SetFilter(nil)
	v.expireSpaceSample()

	type upload struct {
		w   *io.PipeWriter
		err chan error
	}
	var ups []upload
	for i := range 4 {
		pr, pw := io.Pipe()
		u := upload{w: pw, err: make(chan error, 1)}
		go func() {
			_, err := v.e.Put(ctx, name(string(rune('a'+i))), meta.Object{Timestamp: meta.Now(), Size: size}, pr, PutOptions{})
			pr.CloseWithError(err)
			u.err <- err
		}()
		ups = append(ups, u)
	}
	// The refused ones answer without reading a byte; the admitted ones wait for their bodies.
	refused := 0
	deadline := time.After(time.Minute) // refusals come at once: this only catches a hang
	for refused < 2 {
		for i := range ups {
			select {
			case err := <-ups[i].err:
				if !errors.Is(err, meta.ErrInsufficientStorage) {
					t.Fatalf("upload %d: %v before its body was sent, want ErrInsufficientStorage", i, err)
				}
				refused++
				ups[i].err = nil
			default:
			}
		}
		select {
		case <-deadline:
			t.Fatalf("%d uploads refused, want 2: the reservation did not count uploads in flight", refused)
		case <-time.After(10 * time.Millisecond):
		}
	}
	var wg sync.WaitGroup
	for _, u := range ups {
		if u.err == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			u.w.Write(bytes.Repeat([]byte("x"), size))
			u.w.Close()
			if err := <-u.err; err != nil {
				t.Errorf("admitted upload: %v", err)
			}
		}()
	}
	wg.Wait()
}

// A body of unknown length reserves as it arrives: one larger than the free space above the
// reserve is refused part way, leaves no temp file, and does not damage what is stored.
func TestUnknownLengthBodyRunsOutOfReservation(t *testing.T) {
	ffs := vfs.NewFaulty(vfs.Default)
	v := newEnv(t, ffs, "")
	v.reserve = 1 << 20
	v.reopen()
	n := name("chunked")
	v.mustPut(n, []byte("old"))
	ffs.SetFilter(func(string) bool { return false })
	ffs.SetWriteLimit(v.reserve + 20<<20)
	ffs.SetFilter(nil)
	v.expireSpaceSample()
	_, err := v.e.Put(ctx, n, meta.Object{Timestamp: meta.Now(), Size: -1}, bytes.NewReader(make([]byte, 64<<20)), PutOptions{})
	if !errors.Is(err, meta.ErrInsufficientStorage) {
		t.Fatalf("64 MiB of unknown length with 20 MiB free: %v, want ErrInsufficientStorage", err)
	}
	ffs.SetWriteLimit(0)
	assertTmpEmpty(t, v)
	if got := v.mustRead(n); string(got) != "old" {
		t.Fatalf("stored object after the refusal: %q", got)
	}
	if held := v.e.inflight.Load(); held != 0 {
		t.Fatalf("%d bytes still held after every write ended", held)
	}
}

// expireSpaceSample makes the engine's next free-space check sample the disk again, as it does
// once diskCheckInterval has passed, so that it sees what the test has just made the disk
// report (waiting out the interval instead would only bound the wait from below).
func (v *env) expireSpaceSample() { v.e.availAt.Store(0) }

// reportedDisk is the real FS with the free space it reports set by the test.
type reportedDisk struct {
	vfs.FS
	avail sync.Mutex
	bytes uint64
}

func (d *reportedDisk) set(n uint64) {
	d.avail.Lock()
	d.bytes = n
	d.avail.Unlock()
}

func (d *reportedDisk) GetDiskUsage(path string) (pebblevfs.DiskUsage, error) {
	u, err := d.FS.GetDiskUsage(path)
	d.avail.Lock()
	u.AvailBytes = d.bytes
	d.avail.Unlock()
	return u, err
}

// A disk filled by someone else: the ballast file goes to give the index room, deletes go on
// above the delete floor and are refused under it (instead of the WAL write that would kill
// the process), and the ballast comes back once there is room again.
func TestBallastGivesAFullDiskRoom(t *testing.T) {
	disk := &reportedDisk{FS: vfs.Default, bytes: 1 << 40}
	v := newEnv(t, disk, "")
	v.reserve = 64 << 20 // delete floor: 4 MiB
	v.reopen()
	ballast := disk.PathJoin(v.dir, ballastName)
	if st, err := disk.Stat(ballast); err != nil || st.Size() != DefaultBallastBytes || v.e.Stats().BallastBytes != DefaultBallastBytes {
		t.Fatalf("ballast after open: %v, %v, stats %+v", st, err, v.e.Stats())
	}
	for _, n := range []string{"a", "b"} {
		v.mustPut(name(n), []byte(n))
	}

	disk.set(1 << 20)
	v.expireSpaceSample()
	if err := v.e.Delete(ctx, name("a"), meta.Now(), DeleteOptions{}); !errors.Is(err, meta.ErrInsufficientStorage) {
		t.Fatalf("delete under the floor: %v, want ErrInsufficientStorage", err)
	}
	if _, err := disk.Stat(ballast); err == nil || v.e.Stats().BallastBytes != 0 {
		t.Fatalf("ballast still there under the floor (stats %+v)", v.e.Stats())
	}
	if !bytes.Equal(v.mustRead(name("a")), []byte("a")) {
		t.Fatal("the refused delete changed the object")
	}

	disk.set(10 << 20) // above the floor, under the reserve: deletes yes, writes no
	v.expireSpaceSample()
	if err := v.e.Delete(ctx, name("a"), meta.Now(), DeleteOptions{}); err != nil {
		t.Fatalf("delete above the floor: %v", err)
	}
	if _, err := v.e.Put(ctx, name("c"), meta.Object{Timestamp: meta.Now(), Size: 1}, bytes.NewReader([]byte("c")), PutOptions{}); !errors.Is(err, meta.ErrInsufficientStorage) {
		t.Fatalf("put under the reserve: %v, want ErrInsufficientStorage", err)
	}

	disk.set(1 << 40)
	v.expireSpaceSample()
	v.mustPut(name("c"), []byte("c"))
	// The ballast is allocated and synced in the background; the bound only catches a ballast
	// that never comes back.
	deadline := time.Now().Add(2 * time.Minute)
	for v.e.Stats().BallastBytes != DefaultBallastBytes {
		if time.Now().After(deadline) {
			t.Fatal("the ballast did not come back once the disk had room")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st, err := disk.Stat(ballast); err != nil || st.Size() != DefaultBallastBytes {
		t.Fatalf("ballast file after it came back: %v, %v", st, err)
	}
}
