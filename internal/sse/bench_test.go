package sse

import (
	"bytes"
	"io"
	"testing"
)

// The stream format's cost: encrypting and decrypting 4 KiB and 1 MiB, and a 4 KiB range of a
// 1 MiB object (one segment decrypted). Recorded in docs/benchmarks.md.
func benchSizes() []int { return []int{4 << 10, 1 << 20} }

func BenchmarkEncrypt(b *testing.B) {
	key := make([]byte, KeySize)
	for _, n := range benchSizes() {
		plain := make([]byte, n)
		b.Run(sizeName(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				e, _ := NewEncrypter(bytes.NewReader(plain), int64(n), key, "")
				if _, err := io.Copy(io.Discard, e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecrypt(b *testing.B) {
	key := make([]byte, KeySize)
	for _, n := range benchSizes() {
		plain := make([]byte, n)
		e, _ := NewEncrypter(bytes.NewReader(plain), int64(n), key, "")
		stored, _ := io.ReadAll(e)
		l, _ := NewLayout([]Part{{CipherSize: int64(len(stored))}})
		b.Run(sizeName(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				if _, err := io.Copy(io.Discard, l.NewReader(bytes.NewReader(stored), key, 0, int64(n))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	plain := make([]byte, 1<<20)
	e, _ := NewEncrypter(bytes.NewReader(plain), int64(len(plain)), key, "")
	stored, _ := io.ReadAll(e)
	l, _ := NewLayout([]Part{{CipherSize: int64(len(stored))}})
	b.Run("4KiB-range-of-1MiB", func(b *testing.B) {
		b.SetBytes(4 << 10)
		for b.Loop() {
			coff, cn := l.CipherRange(500_000, 4<<10)
			if _, err := io.Copy(io.Discard, l.NewReader(bytes.NewReader(stored[coff:coff+cn]), key, 500_000, 4<<10)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return "1MiB"
	}
	return "4KiB"
}
