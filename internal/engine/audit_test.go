package engine

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// audit runs one pass with a pace that counts, and returns its stats.
func (v *env) audit() (AuditStats, paceCount) {
	v.t.Helper()
	var pc paceCount
	st, err := v.e.Audit(ctx, AuditOptions{Pace: pc.pace})
	if err != nil {
		v.t.Fatalf("audit: %v", err)
	}
	return st, pc
}

type paceCount struct{ records, bytes, calls int64 }

func (p *paceCount) pace(_ context.Context, records, bytes int64) error {
	p.calls++
	p.records += records
	p.bytes += bytes
	return nil
}

// setRecord replaces the raw record under n's key, as a flipped bit on the disk would.
func (v *env) setRecord(n meta.ObjectName, raw []byte) {
	v.t.Helper()
	if err := v.db.Set(objectKey(nil, n), raw, pebble.Sync); err != nil {
		v.t.Fatal(err)
	}
}

func (v *env) record(n meta.ObjectName) []byte {
	v.t.Helper()
	val, closer, err := v.db.Get(objectKey(nil, n))
	if err != nil {
		v.t.Fatal(err)
	}
	defer closer.Close()
	return bytes.Clone(val)
}

// reencode rewrites n's record after change, with a valid record checksum: what a bug that
// stored a wrong data checksum would leave.
func (v *env) reencode(n meta.ObjectName, change func(*record)) {
	v.t.Helper()
	rec, err := decodeRecord(v.record(n))
	if err != nil {
		v.t.Fatal(err)
	}
	change(rec)
	v.setRecord(n, rec.encode(nil))
}

func (v *env) quarantined(suffix string) []string {
	v.t.Helper()
	names, err := v.fs.List(v.fs.PathJoin(v.dir, quarantineDir))
	if err != nil {
		v.t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, suffix) {
			out = append(out, n)
		}
	}
	return out
}

func (v *env) expectCorrupt(n meta.ObjectName) {
	v.t.Helper()
	if _, _, err := v.read(n, nil); !errors.Is(err, meta.ErrCorrupt) {
		v.t.Fatalf("read of %q after the audit: %v, want ErrCorrupt", n.Object, err)
	}
}

// A clean device: every record is visited and paced, every data file read whole, nothing
// flagged.
func TestAuditClean(t *testing.T) {
	v := newEnv(t, nil, "")
	r := rand.New(rand.NewPCG(21, 22))
	sizes := []int{0, 10, DefaultInlineThreshold, DefaultInlineThreshold + 1, 3*BlockSize + 7}
	var fileBytes int64
	for i, size := range sizes {
		v.mustPut(name(string(rune('a'+i))), randBytes(r, size))
		if int64(size) > DefaultInlineThreshold {
			fileBytes += int64(size)
		}
	}
	if err := v.e.Delete(ctx, name("a"), meta.Now(), DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.e.Put(ctx, name("manifest"), longManifest(100), nil, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	st, pc := v.audit()
	want := int64(len(sizes) + 1)
	if st.Records != want || st.Corrupt != 0 || st.Flagged != 0 || st.ReadErrors != 0 {
		t.Fatalf("stats %+v, want %d records and nothing found", st, want)
	}
	if pc.records != want {
		t.Fatalf("paced %d records, want %d", pc.records, want)
	}
	if pc.bytes < fileBytes || st.Bytes < fileBytes || pc.bytes > st.Bytes {
		t.Fatalf("paced %d bytes, read %d; the data files alone are %d", pc.bytes, st.Bytes, fileBytes)
	}
	if s := v.e.Stats(); s.CorruptObjects != 0 || s.ChecksumFailures != 0 {
		t.Fatalf("engine stats %+v", s)
	}
}

// Each kind of damage is found by the pass, flagged as a failed read flags it, and counted once.
func TestAuditFindsDamage(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	big := func() []byte { return randBytes(r, 3*BlockSize+100) }
	cases := []struct {
		name string
		data []byte
		harm func(v *env, n meta.ObjectName)
		// quarantined is the suffix of what the pass leaves in quarantine/.
		quarantined string
	}{
		{"flipped byte in an inline object", randBytes(r, 1000), func(v *env, n meta.ObjectName) {
			raw := v.record(n)
			raw[len(raw)-10] ^= 0x08 // in the inline bytes
			v.setRecord(n, raw)
		}, ".record"},
		{"inline bytes that disagree with their data checksum", randBytes(r, 1000), func(v *env, n meta.ObjectName) {
			v.reencode(n, func(rec *record) { rec.dataCRC ^= 1 })
		}, ""},
		{"record that does not decode", randBytes(r, 1000), func(v *env, n meta.ObjectName) {
			v.setRecord(n, []byte("not a record at all"))
		}, ".record"},
		{"flipped byte in a data file", big(), func(v *env, n meta.ObjectName) {
			flipFileByte(t, v.fs, dataFiles(t, v.fs, v.dir)[0], 2*BlockSize+3)
		}, dataSuffix},
		{"truncated data file", big(), func(v *env, n meta.ObjectName) {
			f := dataFiles(t, v.fs, v.dir)[0]
			if err := os.Truncate(f, 2*BlockSize); err != nil {
				t.Fatal(err)
			}
		}, dataSuffix},
		{"missing data file", big(), func(v *env, n meta.ObjectName) {
			if err := v.fs.Remove(dataFiles(t, v.fs, v.dir)[0]); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"data file whose blocks pass but whose whole checksum does not", big(), func(v *env, n meta.ObjectName) {
			v.reencode(n, func(rec *record) { rec.dataCRC ^= 1 })
		}, dataSuffix},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := newEnv(t, nil, "")
			n, good := name("victim"), name("bystander")
			v.mustPut(good, []byte("fine"))
			v.mustPut(n, c.data)
			c.harm(v, n)
			st, _ := v.audit()
			if st.Corrupt != 1 || st.Records != 2 {
				t.Fatalf("stats %+v, want 2 records and 1 found corrupt", st)
			}
			v.expectCorrupt(n)
			if string(v.mustRead(good)) != "fine" {
				t.Fatal("the bystander was harmed")
			}
			if s := v.e.Stats(); s.CorruptObjects != 1 || s.ChecksumFailures != 1 {
				t.Fatalf("engine stats %+v, want one corrupt object", s)
			}
			if c.quarantined != "" && len(v.quarantined(c.quarantined)) != 1 {
				t.Fatalf("quarantine holds %v, want one %s", v.quarantined(""), c.quarantined)
			}
			// The next pass skips the flagged version and counts nothing twice.
			st, _ = v.audit()
			if st.Corrupt != 0 || st.Flagged != 1 {
				t.Fatalf("second pass %+v, want the version skipped as flagged", st)
			}
			// A write repairs it, and the pass after finds nothing.
			v.mustPut(n, []byte("restored"))
			if st, _ = v.audit(); st.Corrupt != 0 || st.Flagged != 0 {
				t.Fatalf("pass after the repair %+v", st)
			}
		})
	}
}

// A version overwritten or deleted while the pass is at it is not reported, whether its data
// file was removed before the pass opened it, or it went bad and was replaced while being read.
func TestAuditIgnoresConcurrentChanges(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	cases := []struct {
		name string
		// before harms the victim before the pass (nil: nothing).
		before func(v *env, n meta.ObjectName)
		// during runs once, from the pace call chosen by when.
		during func(v *env, n meta.ObjectName)
		when   func(records int64, calls int) bool
	}{
		{"overwritten after its record was read (its file removed)", nil,
			func(v *env, n meta.ObjectName) { v.mustPut(n, []byte("new")) },
			// The bystander's record is read after the victim's, before the victim's file.
			func(records int64, calls int) bool { return records == 1 && calls == 2 }},
		{"deleted after its record was read", nil,
			func(v *env, n meta.ObjectName) {
				if err := v.e.Delete(ctx, n, meta.Now(), DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			func(records int64, calls int) bool { return records == 1 && calls == 2 }},
		{"bad record replaced after it was read",
			func(v *env, n meta.ObjectName) { v.setRecord(n, []byte("garbage")) },
			func(v *env, n meta.ObjectName) { v.mustPut(n, []byte("new")) },
			func(records int64, calls int) bool { return records == 1 && calls == 2 }},
		{"bad block replaced while the file was being read",
			func(v *env, n meta.ObjectName) {
				flipFileByte(t, v.fs, dataFiles(t, v.fs, v.dir)[0], 2*BlockSize+3)
			},
			func(v *env, n meta.ObjectName) { v.mustPut(n, []byte("new")) },
			// The first block of the victim's file.
			func(records int64, calls int) bool { return records == 0 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := newEnv(t, nil, "")
			// The victim's key sorts before the bystander's.
			n := meta.ObjectName{Account: "acct", Container: "cont", Object: "a-victim"}
			v.mustPut(n, randBytes(r, 3*BlockSize+100))
			v.mustPut(name("b-bystander"), []byte("fine"))
			if c.before != nil {
				c.before(v, n)
			}
			calls, done := 0, false
			st, err := v.e.Audit(ctx, AuditOptions{Pace: func(_ context.Context, records, _ int64) error {
				calls++
				if !done && c.when(records, calls) {
					done = true
					c.during(v, n)
				}
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			if !done {
				t.Fatal("the concurrent change never ran")
			}
			if st.Corrupt != 0 {
				t.Fatalf("stats %+v: a changed version was reported", st)
			}
			if s := v.e.Stats(); s.CorruptObjects != 0 || s.ChecksumFailures != 0 {
				t.Fatalf("engine stats %+v: a changed version was flagged", s)
			}
			if _, _, err := v.read(n, nil); err != nil && !errors.Is(err, meta.ErrNotFound) {
				t.Fatalf("read after the pass: %v", err)
			}
		})
	}
}

// The pace sees every data file's blocks, and its error stops the pass with that error.
func TestAuditPaceStops(t *testing.T) {
	v := newEnv(t, nil, "")
	r := rand.New(rand.NewPCG(27, 28))
	for _, o := range []string{"a", "b", "c"} {
		v.mustPut(name(o), randBytes(r, 2*BlockSize))
	}
	var pc paceCount
	if _, err := v.e.Audit(ctx, AuditOptions{Pace: pc.pace}); err != nil {
		t.Fatal(err)
	}
	// Per object: its record, then two blocks.
	if pc.records != 3 || pc.calls != 9 || pc.bytes < 6*BlockSize {
		t.Fatalf("pace calls %+v, want 3 records and 6 blocks", pc)
	}
	stop := errors.New("stop")
	calls := 0
	st, err := v.e.Audit(ctx, AuditOptions{Pace: func(context.Context, int64, int64) error {
		calls++
		if calls == 4 {
			return stop
		}
		return nil
	}})
	if !errors.Is(err, stop) || st.Records != 3 {
		t.Fatalf("audit with a failing pace: %+v, %v; want it stopped in the second object", st, err)
	}
}

// A pass longer than a batch of records reads every record once, in key order, with progress
// reported between batches.
func TestAuditBatches(t *testing.T) {
	v := newEnv(t, nil, "")
	const n = 3*auditBatch + 5
	for i := range n {
		v.mustPut(name(string(rune(0x100+i))), []byte{byte(i)})
	}
	progress := 0
	st, err := v.e.Audit(ctx, AuditOptions{Progress: func(int64) { progress++ }})
	if err != nil {
		t.Fatal(err)
	}
	if st.Records != n || st.Corrupt != 0 {
		t.Fatalf("stats %+v, want %d records", st, n)
	}
	if progress != 4 {
		t.Fatalf("progress reported %d times, want once a batch (4)", progress)
	}
}

// A read of a version whose data file is gone flags it as the pass does (the FS's errors wrap
// the OS's, which os.IsNotExist does not see through).
func TestGetFlagsMissingDataFile(t *testing.T) {
	v := newEnv(t, nil, "")
	n := name("gone")
	v.mustPut(n, bytes.Repeat([]byte("g"), 2*BlockSize))
	if err := v.fs.Remove(dataFiles(t, v.fs, v.dir)[0]); err != nil {
		t.Fatal(err)
	}
	v.expectCorrupt(n)
	if s := v.e.Stats(); s.CorruptObjects != 1 {
		t.Fatalf("engine stats %+v, want the version flagged", s)
	}
}

// Passes running without pause while writers overwrite and delete: nothing is reported or
// flagged, whatever the interleaving.
func TestAuditUnderConcurrentWrites(t *testing.T) {
	v := newEnv(t, nil, "")
	const writers, ops = 4, 60
	stop := make(chan struct{})
	audits := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				audits <- nil
				return
			default:
			}
			st, err := v.e.Audit(ctx, AuditOptions{})
			if err == nil && st.Corrupt != 0 {
				err = errors.New("a pass reported a version that was only being written")
			}
			if err != nil {
				audits <- err
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 29))
			for i := range ops {
				n := name(string(rune('a' + r.IntN(6))))
				if i%5 == 4 {
					v.e.Delete(ctx, n, meta.Now(), DeleteOptions{}) // ErrConflict and ErrNotFound are fine
					continue
				}
				size := 100
				if r.IntN(2) == 0 {
					size = BlockSize + r.IntN(2*BlockSize)
				}
				v.put(n, meta.Now(), randBytes(r, size)) // so is ErrConflict
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-audits; err != nil {
		t.Fatal(err)
	}
	if s := v.e.Stats(); s.CorruptObjects != 0 || s.ChecksumFailures != 0 {
		t.Fatalf("engine stats %+v: a version was flagged", s)
	}
	if st, _ := v.audit(); st.Corrupt != 0 || st.ReadErrors != 0 {
		t.Fatalf("a quiet pass after the writes: %+v", st)
	}
}
