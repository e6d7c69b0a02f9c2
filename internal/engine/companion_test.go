package engine

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cairn-store/cairn/internal/meta"
)

var errNotLink = errors.New("not a link")

// linkTo is a companion that names the object it is committed with, as a versioned write's
// link names its version.
func linkTo(link meta.ObjectName, ts meta.Timestamp) *Companion {
	return &Companion{Name: link, Timestamp: ts, Build: func(obj *meta.Object) (meta.Object, error) {
		return meta.Object{ContentType: obj.ContentType, SysMeta: map[string]string{"link": "true",
			"target-ts": strconv.FormatInt(int64(obj.Timestamp), 10), "target-etag": obj.ETag}}, nil
	}, Admit: func(prev *meta.Object) error {
		if prev != nil && prev.SysMeta["link"] != "true" {
			return errNotLink
		}
		return nil
	}}
}

func (v *env) putWith(n meta.ObjectName, ts meta.Timestamp, data []byte, opts PutOptions) (meta.Object, error) {
	return v.e.Put(ctx, n, meta.Object{Timestamp: ts, Size: int64(len(data)), ContentType: "application/x-test"}, bytes.NewReader(data), opts)
}

func TestCompanionCommitsWithTheObject(t *testing.T) {
	v := newEnv(t, nil, "")
	link := name("key")
	var prev *meta.Object
	for i, size := range []int{10, DefaultInlineThreshold + 1} {
		ts := meta.Now()
		data := bytes.Repeat([]byte{byte('a' + i)}, size)
		c := linkTo(link, ts+1)
		var inBatch []string
		c.InBatch = func(_ *pebble.Batch, obj, p *meta.Object) error {
			inBatch = append(inBatch, obj.SysMeta["target-ts"])
			return nil
		}
		vname := name(fmt.Sprintf("v/key/%d", ts))
		o, err := v.putWith(vname, ts, data, PutOptions{Companion: c})
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		if c.Skipped != nil {
			t.Fatalf("put %d: companion skipped: %v", i, c.Skipped)
		}
		if len(inBatch) != 1 || inBatch[0] != strconv.FormatInt(int64(ts), 10) {
			t.Fatalf("put %d: companion's InBatch saw %v", i, inBatch)
		}
		got, err := v.e.Stat(ctx, link)
		if err != nil {
			t.Fatal(err)
		}
		if got.Timestamp != ts+1 || got.SysMeta["target-etag"] != o.ETag || got.Size != 0 || got.ETag != md5hex(nil) || got.ContentType != "application/x-test" {
			t.Fatalf("put %d: link %+v", i, got)
		}
		if b := v.mustRead(link); len(b) != 0 {
			t.Fatalf("put %d: link has %d bytes", i, len(b))
		}
		if !bytes.Equal(v.mustRead(vname), data) {
			t.Fatalf("put %d: version read back wrong", i)
		}
		if (prev == nil) != (c.Previous == nil) || prev != nil && c.Previous.Timestamp != prev.Timestamp {
			t.Fatalf("put %d: previous %+v, want %+v", i, c.Previous, prev)
		}
		p := c.Stored
		prev = &p
	}
}

func TestCompanionConditionFailsBoth(t *testing.T) {
	v := newEnv(t, nil, "")
	link := name("key")
	v.mustPut(link, []byte("held"))
	cur, _ := v.e.Stat(ctx, link)

	// Refused before the body is read.
	ts := meta.Now()
	c := linkTo(link, ts+1)
	c.If = meta.Precondition{IfNoneMatch: true}
	if _, err := v.putWith(name("v1"), ts, []byte("x"), PutOptions{Companion: c}); !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("put: %v, want precondition failed", err)
	}
	// Refused in the commit: the link changed while the body was read.
	ts = meta.Now()
	c = linkTo(link, ts+10)
	c.If = meta.Precondition{IfTimestamp: cur.Timestamp}
	for _, size := range []int{5, DefaultInlineThreshold + 5} {
		_, err := v.putWith(name("v2"), ts, make([]byte, size), PutOptions{Companion: c, BeforeCommit: func(*meta.Object) error {
			_, err := v.put(link, meta.Now(), []byte("racer"))
			return err
		}})
		if !errors.Is(err, meta.ErrPreconditionFailed) {
			t.Fatalf("put: %v, want precondition failed", err)
		}
	}
	for _, n := range []string{"v1", "v2"} {
		if _, err := v.e.Stat(ctx, name(n)); !errors.Is(err, meta.ErrNotFound) {
			t.Fatalf("%s: %v, want not found: a failed companion fails the object too", n, err)
		}
	}
	if b := v.mustRead(link); string(b) != "racer" {
		t.Fatalf("link holds %q", b)
	}
	if files := dataFiles(t, v.fs, v.dir); len(files) != 0 {
		t.Fatalf("data files left: %v", files)
	}
}

func TestCompanionLeftOut(t *testing.T) {
	v := newEnv(t, nil, "")
	link := name("key")
	// Admit refuses what is in place: the object commits alone.
	v.mustPut(link, []byte("null version"))
	ts := meta.Now()
	c := linkTo(link, ts+1)
	if _, err := v.putWith(name("v1"), ts, []byte("one"), PutOptions{Companion: c}); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(c.Skipped, errNotLink) {
		t.Fatalf("skipped: %v", c.Skipped)
	}
	if string(v.mustRead(link)) != "null version" || string(v.mustRead(name("v1"))) != "one" {
		t.Fatal("wrong contents")
	}
	// A newer version at the companion's name: the companion loses, the object stays.
	newer := meta.Now() + meta.Timestamp(time.Hour)
	if _, err := v.e.Put(ctx, link, meta.Object{Timestamp: newer, SysMeta: map[string]string{"link": "true"}}, nil, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	ts = meta.Now()
	c = linkTo(link, ts+1)
	if _, err := v.putWith(name("v2"), ts, []byte("two"), PutOptions{Companion: c}); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(c.Skipped, meta.ErrConflict) {
		t.Fatalf("skipped: %v", c.Skipped)
	}
	if st, _ := v.e.Stat(ctx, link); st.Timestamp != newer {
		t.Fatalf("link at %d, want %d", st.Timestamp, newer)
	}
	if string(v.mustRead(name("v2"))) != "two" {
		t.Fatal("v2 lost")
	}
	// A companion of the object's own name is refused.
	ts = meta.Now()
	if _, err := v.putWith(name("v3"), ts, []byte("3"), PutOptions{Companion: linkTo(name("v3"), ts+1)}); !errors.Is(err, meta.ErrInvalidName) {
		t.Fatalf("own name: %v", err)
	}
}

func TestCompanionReplacesAFile(t *testing.T) {
	v := newEnv(t, nil, "")
	link := name("key")
	big := make([]byte, DefaultInlineThreshold+100)
	v.mustPut(link, big)
	ts := meta.Now()
	c := linkTo(link, ts+1)
	c.Admit = nil
	if _, err := v.putWith(name("v1"), ts, []byte("x"), PutOptions{Companion: c}); err != nil || c.Skipped != nil {
		t.Fatal(err, c.Skipped)
	}
	if c.Previous == nil || c.Previous.Size != int64(len(big)) {
		t.Fatalf("previous: %+v", c.Previous)
	}
	if files := dataFiles(t, v.fs, v.dir); len(files) != 0 {
		t.Fatalf("the replaced version's data file stays: %v", files)
	}
	v.reopen()
	if st, err := v.e.Stat(ctx, link); err != nil || st.SysMeta["link"] != "true" {
		t.Fatalf("after reopen: %+v %v", st, err)
	}
}

// TestCompanionCrash writes versions with their links from several goroutines and takes crash
// images at random moments: after reopening, every link names a version that is there, and
// every acknowledged version and its link survived.
func TestCompanionCrash(t *testing.T) {
	fs := pebblevfs.NewCrashableMem()
	const dir = "/dev0"
	v := &env{t: t, fs: fs, dir: dir, reserve: -1}
	v.open()
	defer v.close()

	var mu sync.Mutex
	acked := map[string]meta.Timestamp{} // link → newest acknowledged version
	const workers, keys = 4, 5
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for range 2000 {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("w%d/k%d", w, r.IntN(keys))
				ts := meta.Now()
				size := r.IntN(3000)
				if r.IntN(4) == 0 {
					size = DefaultInlineThreshold + 1 + r.IntN(BlockSize)
				}
				data := randBytes(r, size)
				c := linkTo(name(key), ts+1)
				if _, err := v.putWith(name(fmt.Sprintf("v/%s/%d", key, ts)), ts, data, PutOptions{Companion: c}); err != nil || c.Skipped != nil {
					t.Errorf("%s: %v %v", key, err, c.Skipped)
					return
				}
				mu.Lock()
				acked[key] = ts
				mu.Unlock()
			}
		}()
	}
	var images []*pebblevfs.MemFS
	var snaps []map[string]meta.Timestamp
	r := rand.New(rand.NewPCG(3, 3))
	for i := range 6 {
		time.Sleep(time.Duration(1+r.IntN(20)) * time.Millisecond)
		mu.Lock()
		snap := make(map[string]meta.Timestamp, len(acked))
		for k, ts := range acked {
			snap[k] = ts
		}
		mu.Unlock()
		snaps = append(snaps, snap)
		images = append(images, fs.CrashClone(pebblevfs.CrashCloneCfg{UnsyncedDataPercent: []int{0, 50}[i%2], RNG: rand.New(rand.NewPCG(uint64(i), 2))}))
	}
	close(stop)
	wg.Wait()
	for i, img := range images {
		t.Run(fmt.Sprintf("image%d", i), func(t *testing.T) {
			v := &env{t: t, fs: img, dir: dir, reserve: -1}
			v.open()
			defer v.close()
			t.Logf("%d keys with an acknowledged version", len(snaps[i]))
			for w := range workers {
				for k := range keys {
					key := fmt.Sprintf("w%d/k%d", w, k)
					link, err := v.e.Stat(ctx, name(key))
					want, hasAck := snaps[i][key]
					if errors.Is(err, meta.ErrNotFound) {
						if hasAck {
							t.Fatalf("%s: link lost (acknowledged version %d)", key, want)
						}
						continue
					}
					if err != nil {
						t.Fatal(err)
					}
					if hasAck {
						if _, _, err := v.read(name(fmt.Sprintf("v/%s/%d", key, want)), nil); err != nil {
							t.Fatalf("%s: acknowledged version %d: %v", key, want, err)
						}
					}
					target, _ := strconv.ParseInt(link.SysMeta["target-ts"], 10, 64)
					if hasAck && meta.Timestamp(target) < want {
						t.Fatalf("%s: link names %d, older than acknowledged %d", key, target, want)
					}
					_, rd, err := v.read(name(fmt.Sprintf("v/%s/%d", key, target)), nil)
					if err != nil || rd.Object.ETag != link.SysMeta["target-etag"] {
						t.Fatalf("%s: the version the link names (%d) is not there: %v", key, target, err)
					}
				}
			}
		})
	}
}

// TestNewSkipsTheLookup: a write that says its name is new stores and reads back like any
// other, with its companion, without looking at the name: over a version already there (what
// a caller must never do) it is not refused as older, which is how the test sees that no
// lookup happened.
func TestNewSkipsTheLookup(t *testing.T) {
	v := newEnv(t, nil, "")
	link := name("key")
	for i, size := range []int{10, DefaultInlineThreshold + 1} {
		ts := meta.Now()
		data := bytes.Repeat([]byte{byte('a' + i)}, size)
		c := linkTo(link, ts+1)
		vname := name(fmt.Sprintf("v/key/%d", ts))
		if _, err := v.putWith(vname, ts, data, PutOptions{Companion: c, New: true}); err != nil || c.Skipped != nil {
			t.Fatalf("new put %d: %v, companion %v", i, err, c.Skipped)
		}
		got, _, err := v.read(vname, nil)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read %d: %v, %d bytes", i, err, len(got))
		}
		if o, err := v.e.Stat(ctx, link); err != nil || o.SysMeta["target-ts"] != strconv.FormatInt(int64(ts), 10) {
			t.Fatalf("link %d: %v %v", i, err, o.SysMeta)
		}
	}
	n := name("plain")
	newer, older := meta.Now(), meta.Now()-1000
	if _, err := v.putWith(n, newer, []byte("newer"), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.putWith(n, older, []byte("older"), PutOptions{}); !errors.Is(err, meta.ErrConflict) {
		t.Fatalf("an older write with a lookup: %v, want a conflict", err)
	}
	if _, err := v.putWith(n, older, []byte("older"), PutOptions{New: true}); err != nil {
		t.Fatalf("an older write said to be new: %v, want it stored unread", err)
	}
}
