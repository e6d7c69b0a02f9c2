package checksum

import (
	"encoding/binary"
	"fmt"
)

// A multipart upload with a FULL_OBJECT CRC checksum reports the CRC of the whole object. The
// parts' CRCs are combined without rereading the bytes, with zlib's crc32_combine method: the
// CRC of A||B is the CRC of A advanced over len(B) zero bits by a GF(2) matrix, XOR the CRC
// of B. It holds for reflected CRCs whose init and xorout are all ones: CRC32, CRC32C and
// CRC64NVME.

// reflectedPolys are the bit-reversed polynomials of the combinable algorithms.
var reflectedPolys = map[Algorithm]struct {
	poly  uint64
	width int
}{
	CRC32:     {0xedb88320, 32},
	CRC32C:    {0x82f63b78, 32},
	CRC64NVME: {0x9a6c9329ac4bc9b5, 64},
}

// CanCombine reports whether alg supports FULL_OBJECT checksums of multipart uploads.
func CanCombine(alg Algorithm) bool {
	_, ok := reflectedPolys[alg]
	return ok
}

// partChecksum is one part's stored checksum and length.
type Part struct {
	Value string // base64
	Size  int64
}

// CombineFullObject returns the whole-object CRC (base64) of parts in order.
func CombineFullObject(alg Algorithm, parts []Part) (string, error) {
	p, ok := reflectedPolys[alg]
	if !ok {
		return "", fmt.Errorf("%w: %s cannot be a full-object multipart checksum", ErrInvalidChecksumRequest, alg)
	}
	var crc uint64
	for i, part := range parts {
		b, err := alg.Decode(part.Value)
		if err != nil {
			return "", fmt.Errorf("part %d: %w", i+1, err)
		}
		var c uint64
		if p.width == 32 {
			c = uint64(binary.BigEndian.Uint32(b))
		} else {
			c = binary.BigEndian.Uint64(b)
		}
		if i == 0 {
			crc = c
			continue
		}
		crc = crcCombine(p.poly, p.width, crc, c, part.Size)
	}
	out := make([]byte, p.width/8)
	if p.width == 32 {
		binary.BigEndian.PutUint32(out, uint32(crc))
	} else {
		binary.BigEndian.PutUint64(out, crc)
	}
	return Encode(out), nil
}

// crcCombine returns the CRC of A||B from crc1 = CRC(A), crc2 = CRC(B) and len2 = len(B).
func crcCombine(poly uint64, width int, crc1, crc2 uint64, len2 int64) uint64 {
	if len2 <= 0 {
		return crc1
	}
	even := make([]uint64, width) // operator for 2^k zero bits, k even
	odd := make([]uint64, width)  // operator for 2^k zero bits, k odd
	odd[0] = poly                 // one zero bit
	row := uint64(1)
	for n := 1; n < width; n++ {
		odd[n] = row
		row <<= 1
	}
	gf2Square(even, odd) // two zero bits
	gf2Square(odd, even) // four zero bits
	// Apply len2 zero bytes (the first squaring makes one byte's operator).
	for {
		gf2Square(even, odd)
		if len2&1 != 0 {
			crc1 = gf2Times(even, crc1)
		}
		len2 >>= 1
		if len2 == 0 {
			break
		}
		gf2Square(odd, even)
		if len2&1 != 0 {
			crc1 = gf2Times(odd, crc1)
		}
		len2 >>= 1
		if len2 == 0 {
			break
		}
	}
	return crc1 ^ crc2
}

func gf2Times(mat []uint64, vec uint64) uint64 {
	var sum uint64
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

func gf2Square(square, mat []uint64) {
	for n := range mat {
		square[n] = gf2Times(mat, mat[n])
	}
}
