package ecstream

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/meta"
)

// memArchives holds a body's archives in memory, each on one or more holders that may refuse
// to open or break off after some bytes.
type memArchives struct {
	arcs    [][]byte
	holders int
	refuse  map[[2]int]bool
	breakAt map[[2]int]int64 // archive bytes served before the stream breaks
	mu      sync.Mutex
	opened  map[int]int // opens by archive
	broke   int
}

func (m *memArchives) Holders(int) int { return m.holders }

func (m *memArchives) Open(_ context.Context, i, h int, start, stop int64) (io.ReadCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.opened[i]++
	if m.refuse[[2]int{i, h}] {
		return nil, fmt.Errorf("archive %d on holder %d: %w", i, h, meta.ErrUnavailable)
	}
	var r io.Reader = bytes.NewReader(m.arcs[i][start : stop+1])
	if at, ok := m.breakAt[[2]int{i, h}]; ok {
		r = io.MultiReader(io.LimitReader(r, max(at-start, 0)), iotest.ErrReader(errors.New("connection reset")))
	}
	return io.NopCloser(r), nil
}

func (m *memArchives) Broke(int, int, error) {
	m.mu.Lock()
	m.broke++
	m.mu.Unlock()
}

func encodeAll(t *testing.T, s *ec.Scheme, body []byte) [][]byte {
	t.Helper()
	arcs, err := EncodeAll(s, body)
	if err != nil {
		t.Fatal(err)
	}
	return arcs
}

func read(t *testing.T, s *ec.Scheme, m *memArchives, size, off, n int64) ([]byte, error) {
	t.Helper()
	r := NewReader(context.Background(), s, m, size, off, n)
	defer r.Close()
	if err := r.Open(); err != nil {
		return nil, err
	}
	return io.ReadAll(iotest.OneByteReader(iotest.HalfReader(r)))
}

// TestReaderMovesOffBrokenArchives decodes ranges while archives break off in the middle of
// segments or cannot be opened: the bytes are the body's while k archives can be read, and
// the read fails (never with wrong bytes) when they cannot.
func TestReaderMovesOffBrokenArchives(t *testing.T) {
	s, err := ec.New(4, 2, 1000)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	body := make([]byte, 4321)
	for i := range body {
		body[i] = byte(rng.Uint32())
	}
	size := int64(len(body))
	arcs := encodeAll(t, s, body)
	for _, tc := range []struct {
		name    string
		holders int
		refuse  [][2]int
		breaks  map[[2]int]int64
		fails   bool
	}{
		{"all whole", 1, nil, nil, false},
		{"a data archive breaks mid-segment", 1, nil, map[[2]int]int64{{1, 0}: 600}, false},
		{"two break, at different segments", 1, nil, map[[2]int]int64{{0, 0}: 10, {3, 0}: 800}, false},
		{"a data archive cannot be opened", 1, [][2]int{{2, 0}}, nil, false},
		{"the replacement breaks too", 1, nil, map[[2]int]int64{{0, 0}: 300, {4, 0}: 600}, false},
		{"a second holder of the same archive", 2, nil, map[[2]int]int64{{0, 0}: 300, {4, 0}: 600, {5, 0}: 700, {1, 0}: 900}, false},
		{"three archives lost", 1, [][2]int{{5, 0}}, map[[2]int]int64{{0, 0}: 300, {4, 0}: 600}, true},
	} {
		for _, r := range [][2]int64{{0, size}, {999, 2}, {1500, 2000}, {size - 5, 5}} {
			m := &memArchives{arcs: arcs, holders: tc.holders, refuse: map[[2]int]bool{}, breakAt: tc.breaks, opened: map[int]int{}}
			for _, x := range tc.refuse {
				m.refuse[x] = true
			}
			got, err := read(t, s, m, size, r[0], r[1])
			want := body[r[0] : r[0]+r[1]]
			if !bytes.Equal(got, want[:min(len(got), len(want))]) {
				t.Fatalf("%s, range %v: wrong bytes", tc.name, r)
			}
			if tc.fails {
				if err == nil && r[1] > 200 {
					t.Fatalf("%s, range %v: read without an error", tc.name, r)
				}
				continue
			}
			if err != nil || len(got) != len(want) {
				t.Fatalf("%s, range %v: %d bytes, %v", tc.name, r, len(got), err)
			}
		}
	}
}

// TestReaderAdopted decodes from archives opened before the reader existed.
func TestReaderAdopted(t *testing.T) {
	s, _ := ec.New(3, 2, 500)
	body := bytes.Repeat([]byte("adopted archives "), 200)
	arcs := encodeAll(t, s, body)
	m := &memArchives{arcs: arcs, holders: 1, refuse: map[[2]int]bool{}, breakAt: map[[2]int]int64{{1, 0}: 400}, opened: map[int]int{}}
	r := NewReader(context.Background(), s, m, int64(len(body)), 0, int64(len(body)))
	for i := range 3 {
		rc, _ := m.Open(context.Background(), i, 0, 0, int64(len(arcs[i]))-1)
		r.Adopt(i, 0, rc)
	}
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	if m.broke != 1 || m.opened[3] != 1 {
		t.Fatalf("breaks %d, opens %v: want archive 1 to break and archive 3 to replace it", m.broke, m.opened)
	}
}

// TestBarrier: the hooks return together, all to commit once need arrived, all refused once
// that cannot happen.
func TestBarrier(t *testing.T) {
	ctx := context.Background()
	b := NewBarrier(5, 3)
	errs := make(chan error, 5)
	for i := range 2 {
		go func() { errs <- b.Arrive(ctx, i) }()
	}
	b.Fail(4)
	for arrived := 0; arrived < 2; runtime.Gosched() {
		b.mu.Lock()
		arrived = b.ready
		b.mu.Unlock()
	}
	select {
	case <-b.done:
		t.Fatal("the barrier opened with two of three arrived")
	default:
	}
	go func() { errs <- b.Arrive(ctx, 2) }()
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatalf("with three arrived: %v", err)
		}
	}
	if err := b.Arrive(ctx, 3); err != nil {
		t.Fatalf("a late arrival after the quorum: %v", err)
	}

	b = NewBarrier(4, 3)
	go func() { errs <- b.Arrive(ctx, 0) }()
	go func() { errs <- b.Arrive(ctx, 0) }() // a retried empty body arrives twice: once counts
	b.Fail(1)
	b.Fail(2)
	for range 2 {
		if err := <-errs; !errors.Is(err, ErrShort) {
			t.Fatalf("with two of four failed and three needed: %v", err)
		}
	}
}

func arc(i int, written meta.Timestamp, etag string) meta.ECArchive {
	return meta.ECArchive{Index: i, K: 2, M: 2, SegmentSize: 100, Size: 10, ETag: etag, Written: written}
}

func answer(a meta.ECArchive, ts meta.Timestamp) Answer {
	o := meta.Object{Timestamp: ts, SysMeta: map[string]string{}}
	a.Set(o.SysMeta)
	return NewAnswer(o, nil)
}

// TestDecodable: the newest bytes that k indexes hold win, with the newest metadata among
// their archives; fewer indexes of newer bytes do not; NeedMore asks for the handoffs then.
func TestDecodable(t *testing.T) {
	notFound := Answer{Err: meta.ErrNotFound}
	down := Answer{Err: meta.ErrUnavailable}
	answers := []Answer{
		answer(arc(0, 10, "old"), 10),
		answer(arc(1, 10, "old"), 30), // POSTed at 30
		answer(arc(2, 20, "new"), 20), // newer bytes, on one index only
		answer(arc(3, 10, "old"), 10),
		NewAnswer(meta.Object{Timestamp: 99}, nil), // no archive: as none
		notFound,
	}
	v, _ := Decodable(answers, 2)
	if v == nil || v.Arc.ETag != "old" || v.Newest != 1 || len(v.Holders[0]) != 1 || len(v.Holders[2]) != 0 {
		t.Fatalf("decodable = %+v", v)
	}
	if !NeedMore(answers, 2) {
		t.Fatal("newer bytes on one index: the handoffs must be asked")
	}
	answers[0] = answer(arc(0, 20, "new"), 20)
	if v, _ = Decodable(answers, 2); v == nil || v.Arc.ETag != "new" || NeedMore(answers, 2) {
		t.Fatalf("two indexes of the newer bytes: %+v", v)
	}
	v, missing := Decodable([]Answer{answer(arc(3, 10, "x"), 10), notFound, down}, 2)
	if v != nil || missing != 1 {
		t.Fatalf("one index: %+v, missing %d", v, missing)
	}
	if n, _ := Unanswered([]Answer{notFound, down, down}); n != 2 {
		t.Fatalf("unanswered %d", n)
	}
	if NeedMore([]Answer{notFound, notFound}, 2) {
		t.Fatal("nothing anywhere: no handoff to ask")
	}
}

// TestEncode: the body's size and ETag, its declared length enforced, and archives whose PUT
// stopped skipped until fewer than need are left.
func TestEncode(t *testing.T) {
	s, _ := ec.New(2, 1, 64)
	body := bytes.Repeat([]byte("x"), 300)
	run := func(declared int64, dead int) (int64, string, error, [][]byte) {
		pipes := make([]*io.PipeWriter, 3)
		got := make([][]byte, 3)
		var wg sync.WaitGroup
		for i := range pipes {
			pr, pw := io.Pipe()
			pipes[i] = pw
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i < dead {
					pr.CloseWithError(errors.New("stopped"))
					return
				}
				got[i], _ = io.ReadAll(pr)
			}()
		}
		n, etag, err := Encode(s, bytes.NewReader(body), declared, pipes, 2)
		for _, pw := range pipes {
			pw.CloseWithError(err)
		}
		wg.Wait()
		return n, etag, err, got
	}
	n, etag, err, got := run(300, 1)
	sum := md5.Sum(body)
	if err != nil || n != 300 || etag != hex.EncodeToString(sum[:]) {
		t.Fatalf("encode: %d %s %v", n, etag, err)
	}
	if want := encodeAll(t, s, body); !bytes.Equal(got[1], want[1]) || !bytes.Equal(got[2], want[2]) {
		t.Fatal("archives differ from EncodeAll's")
	}
	if _, _, err, _ := run(299, 0); !errors.Is(err, meta.ErrBodyTooLong) {
		t.Fatalf("long body: %v", err)
	}
	if _, _, err, _ := run(301, 0); !errors.Is(err, meta.ErrIncompleteBody) {
		t.Fatalf("short body: %v", err)
	}
	if _, _, err, _ := run(-1, 2); !errors.Is(err, ErrShort) {
		t.Fatalf("two of three stopped, two needed: %v", err)
	}
}
