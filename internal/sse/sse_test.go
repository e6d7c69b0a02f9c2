package sse

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

func randomBytes(t testing.TB, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func encrypt(t testing.TB, plain, key []byte, stream string) []byte {
	e, err := NewEncrypter(bytes.NewReader(plain), int64(len(plain)), key, stream)
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(e)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(out)) != CipherSize(int64(len(plain))) {
		t.Fatalf("stream of %d bytes is %d, CipherSize says %d", len(plain), len(out), CipherSize(int64(len(plain))))
	}
	return out
}

// decrypt reads plaintext [off, off+n) of streams (concatenated) as a reader of the stored
// range would.
func decrypt(t testing.TB, parts []Part, stored, key []byte, off, n int64) ([]byte, error) {
	l, err := NewLayout(parts)
	if err != nil {
		return nil, err
	}
	coff, cn := l.CipherRange(off, n)
	return io.ReadAll(l.NewReader(bytes.NewReader(stored[coff:coff+cn]), key, off, n))
}

var sizes = []int{0, 1, 100, SegmentSize - 1, SegmentSize, SegmentSize + 1, 3*SegmentSize + 17, 4 * SegmentSize}

func TestSizes(t *testing.T) {
	for p := int64(0); p < 3*SegmentSize+40; p += 7 {
		got, err := PlainSize(CipherSize(p))
		if err != nil || got != p {
			t.Fatalf("PlainSize(CipherSize(%d)) = %d, %v", p, got, err)
		}
	}
	for _, c := range []int64{0, 15, sealedSegment + 5, sealedSegment + TagSize} {
		if _, err := PlainSize(c); !errors.Is(err, ErrBadLayout) {
			t.Errorf("PlainSize(%d): %v, want ErrBadLayout", c, err)
		}
	}
}

func TestRoundTripAndRanges(t *testing.T) {
	key := randomBytes(t, KeySize)
	for _, size := range sizes {
		plain := randomBytes(t, size)
		stored := encrypt(t, plain, key, "")
		parts := []Part{{CipherSize: int64(len(stored))}}
		got, err := decrypt(t, parts, stored, key, 0, int64(size))
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("size %d: whole read: %v (equal %v)", size, err, bytes.Equal(got, plain))
		}
		edges := []int64{0, 1, SegmentSize - 1, SegmentSize, SegmentSize + 1, 2 * SegmentSize, int64(size) - 1}
		for _, a := range edges {
			for _, b := range edges {
				if a < 0 || b < a || b >= int64(size) {
					continue
				}
				got, err := decrypt(t, parts, stored, key, a, b-a+1)
				if err != nil || !bytes.Equal(got, plain[a:b+1]) {
					t.Fatalf("size %d range %d-%d: %v", size, a, b, err)
				}
			}
		}
	}
}

func TestRangeReadsOnlyNeededSegments(t *testing.T) {
	l, err := NewLayout([]Part{{CipherSize: CipherSize(10 * SegmentSize)}})
	if err != nil {
		t.Fatal(err)
	}
	coff, cn := l.CipherRange(5*SegmentSize+3, 10)
	if coff != 5*sealedSegment || cn != sealedSegment {
		t.Fatalf("CipherRange = %d+%d, want one segment at %d", coff, cn, 5*sealedSegment)
	}
}

func TestEncryptUnknownSize(t *testing.T) {
	key := randomBytes(t, KeySize)
	for _, size := range sizes {
		plain := randomBytes(t, size)
		e, err := NewEncrypter(io.MultiReader(bytes.NewReader(plain)), -1, key, "")
		if err != nil {
			t.Fatal(err)
		}
		stored, err := io.ReadAll(e)
		if err != nil || !bytes.Equal(stored, encrypt(t, plain, key, "")) || e.PlainSize() != int64(size) {
			t.Fatalf("size %d: unknown-size stream differs from the known-size one (%v)", size, err)
		}
	}
}

func TestTamperEverySegment(t *testing.T) {
	key := randomBytes(t, KeySize)
	plain := randomBytes(t, 3*SegmentSize+17)
	stored := encrypt(t, plain, key, "")
	parts := []Part{{CipherSize: int64(len(stored))}}
	for seg := 0; seg*sealedSegment < len(stored); seg++ {
		for _, at := range []int{0, 100, TagSize + 1} {
			i := seg*sealedSegment + at
			if i >= len(stored) {
				continue
			}
			bad := bytes.Clone(stored)
			bad[i] ^= 0x01
			got, err := decrypt(t, parts, bad, key, 0, int64(len(plain)))
			if !errors.Is(err, ErrTampered) {
				t.Fatalf("flip at %d: err %v", i, err)
			}
			if !bytes.Equal(got, plain[:min(len(got), len(plain))]) {
				t.Fatalf("flip at %d: returned bytes that are not the plaintext", i)
			}
			if len(got) > seg*SegmentSize {
				t.Fatalf("flip in segment %d: %d bytes returned, past the damage", seg, len(got))
			}
		}
	}
}

func TestTruncateAndSwap(t *testing.T) {
	key := randomBytes(t, KeySize)
	plain := randomBytes(t, 3*SegmentSize)
	stored := encrypt(t, plain, key, "")
	// Cut off the last segment: the stored size says two segments, the second is not final.
	cut := stored[:2*sealedSegment]
	if _, err := decrypt(t, []Part{{CipherSize: int64(len(cut))}}, cut, key, 0, 2*SegmentSize); !errors.Is(err, ErrTampered) {
		t.Fatalf("truncated stream: %v", err)
	}
	// A source shorter than the layout says.
	l, _ := NewLayout([]Part{{CipherSize: int64(len(stored))}})
	if _, err := io.ReadAll(l.NewReader(bytes.NewReader(stored[:len(stored)-1]), key, 0, int64(len(plain)))); !errors.Is(err, ErrTampered) {
		t.Fatalf("short source: %v", err)
	}
	// Swap segments 0 and 1.
	sw := bytes.Clone(stored)
	copy(sw[:sealedSegment], stored[sealedSegment:2*sealedSegment])
	copy(sw[sealedSegment:2*sealedSegment], stored[:sealedSegment])
	if _, err := decrypt(t, []Part{{CipherSize: int64(len(sw))}}, sw, key, 0, int64(len(plain))); !errors.Is(err, ErrTampered) {
		t.Fatalf("swapped segments: %v", err)
	}
	// A range read of a swapped segment fails too.
	if _, err := decrypt(t, []Part{{CipherSize: int64(len(sw))}}, sw, key, 10, 10); !errors.Is(err, ErrTampered) {
		t.Fatalf("range of swapped segment: %v", err)
	}
	// Wrong key, or the stream read under another name.
	if _, err := decrypt(t, []Part{{CipherSize: int64(len(stored))}}, stored, randomBytes(t, KeySize), 0, 5); !errors.Is(err, ErrTampered) {
		t.Fatalf("wrong key: %v", err)
	}
	if _, err := decrypt(t, []Part{{Name: "other", CipherSize: int64(len(stored))}}, stored, key, 0, 5); !errors.Is(err, ErrTampered) {
		t.Fatalf("other stream name: %v", err)
	}
}

func TestEmptyObjectAuthenticated(t *testing.T) {
	key := randomBytes(t, KeySize)
	stored := encrypt(t, nil, key, "")
	if got, err := decrypt(t, []Part{{CipherSize: TagSize}}, stored, key, 0, 0); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v %d", err, len(got))
	}
	stored[3] ^= 1
	if _, err := decrypt(t, []Part{{CipherSize: TagSize}}, stored, key, 0, 0); !errors.Is(err, ErrTampered) {
		t.Fatalf("tampered empty: %v", err)
	}
}

func TestMultipartLayout(t *testing.T) {
	key := randomBytes(t, KeySize)
	p1, p2, p3 := randomBytes(t, 2*SegmentSize+5), randomBytes(t, SegmentSize), randomBytes(t, 7)
	s1, s2, s3 := encrypt(t, p1, key, "a"), encrypt(t, p2, key, "b"), encrypt(t, p3, key, "c")
	parts := []Part{{"a", int64(len(s1))}, {"b", int64(len(s2))}, {"c", int64(len(s3))}}
	stored := append(append(bytes.Clone(s1), s2...), s3...)
	plain := append(append(bytes.Clone(p1), p2...), p3...)
	for _, r := range [][2]int64{{0, int64(len(plain))}, {2*SegmentSize + 4, 3}, {2*SegmentSize + 5, SegmentSize}, {int64(len(plain)) - 8, 8}, {SegmentSize, 2 * SegmentSize}} {
		got, err := decrypt(t, parts, stored, key, r[0], r[1])
		if err != nil || !bytes.Equal(got, plain[r[0]:r[0]+r[1]]) {
			t.Fatalf("range %v: %v", r, err)
		}
	}
	// Parts swapped in the manifest (names travel with them, so each is read with its own
	// key) read the parts in the new order; parts whose names were swapped fail.
	bad := []Part{{"b", int64(len(s1))}, {"a", int64(len(s2))}, {"c", int64(len(s3))}}
	if _, err := decrypt(t, bad, stored, key, 0, int64(len(plain))); err == nil {
		t.Fatal("parts read under each other's names decrypted")
	}
}

type memKMS struct {
	mu   sync.Mutex
	keys []KMSKey
}

func (m *memKMS) KMSKeys(context.Context) ([]KMSKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]KMSKey(nil), m.keys...), nil
}

func (m *memKMS) PutKMSKey(_ context.Context, k KMSKey, create bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, o := range m.keys {
		if o.ID == k.ID || (k.Alias != "" && o.Alias == k.Alias && create) {
			if create {
				return ErrKMSKeyExists
			}
			m.keys[i] = k
			return nil
		}
	}
	if !create {
		return ErrKMSKeyNotFound
	}
	m.keys = append(m.keys, k)
	return nil
}

func TestKeyring(t *testing.T) {
	ctx := context.Background()
	store := &memKMS{}
	master := randomBytes(t, KeySize)
	kr, err := NewKeyring(master, store)
	if err != nil {
		t.Fatal(err)
	}
	b := Binding{Bucket: "bkt", Key: "k"}
	cust := randomBytes(t, KeySize)
	mine, err := kr.CreateKMSKey(ctx, "mine")
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []Request{{Mode: ModeS3}, {Mode: ModeKMS}, {Mode: ModeKMS, KMSKeyID: "alias/mine", Context: "e30="}, {Mode: ModeKMS, KMSKeyID: mine.ID}, {Mode: ModeC, CustomerKey: cust}} {
		dk, env, err := kr.NewDataKey(ctx, req, b)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		env2, err := ParseEnvelope(env.Encode())
		if err != nil {
			t.Fatalf("%+v: envelope: %v", req, err)
		}
		var c []byte
		if req.Mode == ModeC {
			c = cust
		}
		got, err := kr.OpenDataKey(ctx, env2, c, b)
		if err != nil || !bytes.Equal(got, dk) {
			t.Fatalf("%+v: open: %v", req, err)
		}
		// Another name: the seal is bound to bucket and key.
		if _, err := kr.OpenDataKey(ctx, env2, c, Binding{Bucket: "bkt", Key: "k2"}); !errors.Is(err, ErrTampered) {
			t.Fatalf("%+v: other key: %v", req, err)
		}
		// Another master key is detected as such.
		other, _ := NewKeyring(randomBytes(t, KeySize), store)
		if _, err := other.OpenDataKey(ctx, env2, c, b); req.Mode != ModeC && !errors.Is(err, ErrWrongMasterKey) {
			t.Fatalf("%+v: other master: %v", req, err)
		}
		// A flipped byte of the sealed key.
		env2.Sealed[20] ^= 1
		if _, err := kr.OpenDataKey(ctx, env2, c, b); !errors.Is(err, ErrTampered) {
			t.Fatalf("%+v: tampered seal: %v", req, err)
		}
		if req.Mode == ModeC {
			if _, err := kr.OpenDataKey(ctx, env, nil, b); !errors.Is(err, ErrCustomerKeyRequired) {
				t.Fatalf("no customer key: %v", err)
			}
			if _, err := kr.OpenDataKey(ctx, env, randomBytes(t, KeySize), b); !errors.Is(err, ErrCustomerKeyMismatch) {
				t.Fatalf("wrong customer key: %v", err)
			}
		}
	}
	if _, _, err := kr.NewDataKey(ctx, Request{Mode: ModeKMS, KMSKeyID: "nope"}, b); !errors.Is(err, ErrKMSKeyNotFound) {
		t.Fatalf("unknown KMS key: %v", err)
	}
	_, env, err := kr.NewDataKey(ctx, Request{Mode: ModeKMS, KMSKeyID: "arn:aws:kms:us-east-1:1:key/" + mine.ID}, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kr.SetKMSKeyEnabled(ctx, mine.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := kr.OpenDataKey(ctx, env, nil, b); !errors.Is(err, ErrKMSKeyDisabled) {
		t.Fatalf("disabled key decrypts: %v", err)
	}
	if _, _, err := kr.NewDataKey(ctx, Request{Mode: ModeKMS, KMSKeyID: "alias/mine"}, b); !errors.Is(err, ErrKMSKeyDisabled) {
		t.Fatalf("disabled key encrypts: %v", err)
	}
	keys, _ := kr.KMSKeys(ctx)
	if len(keys) != 2 || keys[1].Alias != DefaultKMSAlias {
		t.Fatalf("keys %+v: want mine and the default made on use", keys)
	}
}

func TestOpen(t *testing.T) {
	ctx := context.Background()
	kr, _ := NewKeyring(randomBytes(t, KeySize), nil)
	b := Binding{Bucket: "b", Key: "k"}
	dk, env, err := kr.NewDataKey(ctx, Request{Mode: ModeS3}, b)
	if err != nil {
		t.Fatal(err)
	}
	plain := randomBytes(t, 2*SegmentSize+9)
	stored := encrypt(t, plain, dk, "")
	obj := meta.Object{Size: int64(len(stored)), SysMeta: Mark(nil, env, int64(len(plain)), "etag")}
	var asked *meta.Range
	open := func(_ context.Context, r *meta.Range) (io.ReadCloser, error) {
		asked = r
		return io.NopCloser(bytes.NewReader(stored[r.Start : r.End+1])), nil
	}
	p, err := kr.Open(ctx, &obj, nil, b, &meta.Range{Suffix: 5}, open)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(p)
	if err != nil || !bytes.Equal(got, plain[len(plain)-5:]) || p.Offset != int64(len(plain))-5 {
		t.Fatalf("suffix range: %v", err)
	}
	if asked.Start != 2*sealedSegment {
		t.Fatalf("read from %d, want only the last segment", asked.Start)
	}
	if _, err := kr.Open(ctx, &obj, nil, b, &meta.Range{Start: int64(len(plain)), End: -1}, open); !errors.Is(err, meta.ErrInvalidRange) {
		t.Fatalf("range past the plaintext: %v", err)
	}
	// Damage in the first segment read is an error from Open itself, before any byte.
	stored[2*sealedSegment+3] ^= 1
	if _, err := kr.Open(ctx, &obj, nil, b, &meta.Range{Suffix: 5}, open); !errors.Is(err, ErrTampered) {
		t.Fatalf("Open of a damaged segment: %v", err)
	}
	p, err = kr.Open(ctx, &obj, nil, b, &meta.Range{Start: 0, End: 10}, open)
	if err != nil {
		t.Fatalf("Open of a range before the damage: %v", err)
	}
	if got, err := io.ReadAll(p); err != nil || !bytes.Equal(got, plain[:11]) {
		t.Fatalf("range before the damage: %v", err)
	}
	if s := Served(obj); s.Size != int64(len(plain)) || s.ETag != "etag" {
		t.Fatalf("served %d %q", s.Size, s.ETag)
	}
}

func TestMasterKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := MasterKeyPathFor(filepath.Join(dir, "data"))
	k1, created, err := EnsureMasterKey(path)
	if err != nil || !created || len(k1) != KeySize {
		t.Fatalf("create: %v %v", created, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", st.Mode(), err)
	}
	k2, created, err := EnsureMasterKey(path)
	if err != nil || created || !bytes.Equal(k1, k2) {
		t.Fatalf("reopen: %v %v", created, err)
	}
	for _, bad := range []string{"", "abc", "00", string(randomBytes(t, 32))} {
		os.WriteFile(path, []byte(bad), 0o600)
		if _, err := ReadMasterKey(path); !errors.Is(err, ErrBadMasterKey) {
			t.Fatalf("bad file %q: %v", bad, err)
		}
	}
	if _, err := ParseMasterKey([]byte("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n")); err != nil {
		t.Fatalf("base64: %v", err)
	}
}

func FuzzEnvelope(f *testing.F) {
	kr, _ := NewKeyring(make([]byte, KeySize), nil)
	_, env, _ := kr.NewDataKey(context.Background(), Request{Mode: ModeS3}, Binding{})
	f.Add(env.Encode())
	f.Add("v=1&mode=aws%3Akms&kms=abc&ctx=e30%3D&kcv=0011223344556677&key=" + string(bytes.Repeat([]byte("A"), 80)))
	f.Add("v=2")
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseEnvelope(s)
		if err != nil {
			if !errors.Is(err, ErrBadEnvelope) {
				t.Fatalf("error %v is not ErrBadEnvelope", err)
			}
			return
		}
		e2, err := ParseEnvelope(e.Encode())
		if err != nil || e2.Encode() != e.Encode() {
			t.Fatalf("round trip of %q: %v", s, err)
		}
	})
}

// FuzzDecrypt: whatever the stored bytes, a reader returns only authenticated plaintext.
func FuzzDecrypt(f *testing.F) {
	key := make([]byte, KeySize)
	plain := bytes.Repeat([]byte("cairn"), 30000)
	e, _ := NewEncrypter(bytes.NewReader(plain), int64(len(plain)), key, "")
	stored, _ := io.ReadAll(e)
	f.Add(0, byte(1), int64(0), int64(len(plain)))
	f.Add(SegmentSize+20, byte(0x80), int64(SegmentSize-3), int64(10))
	f.Fuzz(func(t *testing.T, at int, flip byte, off, n int64) {
		if off < 0 || n < 1 || off >= int64(len(plain)) || n > int64(len(plain))-off {
			return
		}
		bad := bytes.Clone(stored)
		if at >= 0 && at < len(bad) {
			bad[at] ^= flip
		}
		l, _ := NewLayout([]Part{{CipherSize: int64(len(bad))}})
		coff, cn := l.CipherRange(off, n)
		got, err := io.ReadAll(l.NewReader(bytes.NewReader(bad[coff:coff+cn]), key, off, n))
		if !bytes.Equal(got, plain[off:off+int64(len(got))]) {
			t.Fatalf("returned bytes that are not the plaintext")
		}
		if err == nil && int64(len(got)) != n {
			t.Fatalf("short read without error")
		}
		if flip != 0 && at >= int(coff) && at < int(coff+cn) && err == nil {
			t.Fatalf("flip at %d inside the read range went unnoticed", at)
		}
	})
}
