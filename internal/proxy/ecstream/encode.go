package ecstream

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"sync"

	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/meta"
)

// ErrShort fails the archive PUTs of an object that cannot have the archives it needs.
var ErrShort = fmt.Errorf("too few fragment archives arrived whole: %w", meta.ErrUnavailable)

// Barrier is the rendezvous of one object's archive PUTs before they commit: each archive's
// commit hook (its BeforeCommit) calls Arrive once the archive's body is whole, and waits until
// need archives have arrived (then every hook lets its archive commit) or that can no longer
// happen (then none does). An archive PUT that ends without arriving calls Fail.
type Barrier struct {
	mu          sync.Mutex
	need        int
	ready, open int
	state       []int // per archive: 0 on its way, 1 arrived, 2 failed
	done        chan struct{}
	ok          bool
}

// NewBarrier returns the barrier of n archives of which need must arrive.
func NewBarrier(n, need int) *Barrier {
	return &Barrier{need: need, open: n, state: make([]int, n), done: make(chan struct{})}
}

// decide releases the hooks once the outcome is known; called with mu held.
func (b *Barrier) decide() {
	select {
	case <-b.done:
		return
	default:
	}
	switch {
	case b.ready >= b.need:
		b.ok = true
		close(b.done)
	case b.ready+b.open < b.need:
		close(b.done)
	}
}

// Arrive records that archive i's body is whole, and waits for the outcome: nil to commit,
// ErrShort (or ctx's error) not to. An archive may arrive more than once (a retried PUT of an
// empty body): it counts once.
func (b *Barrier) Arrive(ctx context.Context, i int) error {
	b.mu.Lock()
	if b.state[i] == 0 {
		b.state[i] = 1
		b.ready++
		b.open--
	}
	b.decide()
	b.mu.Unlock()
	select {
	case <-b.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if !b.ok {
		return ErrShort
	}
	return nil
}

// Fail records that archive i will not arrive.
func (b *Barrier) Fail(i int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state[i] == 0 {
		b.state[i] = 2
		b.open--
		b.decide()
	}
}

// Encode reads a body of declared bytes (-1: unknown, or a manifest's, which is not checked),
// hashes it and encodes it into the archive pipes, one per fragment index, skipping archives
// whose PUT stopped reading; it stops with ErrShort when fewer than need are left. It returns
// the body's size and ETag (hex MD5: the object's, which no node sees whole). The pipes are
// left open: the caller closes them, once what the archives' hooks need is known.
func Encode(scheme *ec.Scheme, body io.Reader, declared int64, pipes []*io.PipeWriter, need int) (int64, string, error) {
	h := md5.New()
	in := body
	if declared >= 0 {
		in = io.LimitReader(body, declared+1) // one byte more tells a body that is too long
	}
	alive := len(pipes)
	ws := make([]io.Writer, len(pipes))
	for i, pw := range pipes {
		ws[i] = &archiveWriter{pw: pw, alive: &alive, need: need}
	}
	total, err := scheme.Encode(io.TeeReader(in, h), ws)
	switch {
	case err != nil:
		return total, "", err
	case declared >= 0 && total > declared:
		return total, "", fmt.Errorf("body of more than %d bytes: %w", declared, meta.ErrBodyTooLong)
	case declared >= 0 && total < declared:
		return total, "", fmt.Errorf("%d of %d bytes: %w", total, declared, meta.ErrIncompleteBody)
	}
	return total, hex.EncodeToString(h.Sum(nil)), nil
}

// archiveWriter is one archive's pipe for the encoder: an archive whose PUT stopped is
// skipped, and the encoding stops when fewer than need archives are left.
type archiveWriter struct {
	pw    *io.PipeWriter
	dead  bool
	alive *int // shared by the object's writers, which the encoder calls in turn
	need  int
}

func (w *archiveWriter) Write(b []byte) (int, error) {
	if w.dead {
		return len(b), nil
	}
	if _, err := w.pw.Write(b); err != nil {
		w.dead = true
		*w.alive--
		if *w.alive < w.need {
			return 0, ErrShort
		}
	}
	return len(b), nil
}

// EncodeAll encodes a small object held in memory: the bytes of each archive.
func EncodeAll(scheme *ec.Scheme, data []byte) ([][]byte, error) {
	bufs := make([]bytes.Buffer, scheme.Fragments())
	ws := make([]io.Writer, len(bufs))
	for i := range bufs {
		ws[i] = &bufs[i]
	}
	if _, err := scheme.Encode(bytes.NewReader(data), ws); err != nil {
		return nil, err
	}
	out := make([][]byte, len(bufs))
	for i := range bufs {
		out[i] = bufs[i].Bytes()
	}
	return out, nil
}
