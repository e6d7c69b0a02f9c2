package checksum

import (
	"encoding/binary"
	"testing"
)

func TestCRCCombine(t *testing.T) {
	data := []byte("The quick brown fox jumps over the lazy dog, again and again and again.")
	for _, alg := range []Algorithm{CRC32, CRC32C, CRC64NVME} {
		for _, cut := range []int{0, 1, 7, 33, len(data) - 1} {
			parts := []Part{
				{Value: alg.Sum(data[:cut]), Size: int64(cut)},
				{Value: alg.Sum(data[cut:]), Size: int64(len(data) - cut)},
			}
			got, err := CombineFullObject(alg, parts)
			if err != nil || got != alg.Sum(data) {
				t.Errorf("%s cut %d: %s, want %s (%v)", alg, cut, got, alg.Sum(data), err)
			}
		}
	}
	// CRC-64/NVME check value, to be sure the polynomial is the right one.
	var want [8]byte
	binary.BigEndian.PutUint64(want[:], 0xae8b14860a799888)
	if got := CRC64NVME.Sum([]byte("123456789")); got != Encode(want[:]) {
		t.Errorf("CRC64NVME check value: %s", got)
	}
}
