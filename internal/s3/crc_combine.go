package s3

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/cairn-store/cairn/internal/s3/checksum"
)

// A multipart upload with a FULL_OBJECT CRC checksum reports the CRC of the whole object. The
// parts' CRCs are combined without rereading the bytes, with zlib's crc32_combine method: the
// CRC of A||B is the CRC of A advanced over len(B) zero bits by a GF(2) matrix, XOR the CRC
// of B. It holds for reflected CRCs whose init and xorout are all ones: CRC32, CRC32C and
// CRC64NVME.

// reflectedPolys are the bit-reversed polynomials of the combinable algorithms.
var reflectedPolys = map[checksum.Algorithm]struct {
	poly  uint64
	width int
}{
	checksum.CRC32:     {0xedb88320, 32},
	checksum.CRC32C:    {0x82f63b78, 32},
	checksum.CRC64NVME: {0x9a6c9329ac4bc9b5, 64},
}

// canCombine reports whether alg supports FULL_OBJECT checksums of multipart uploads.
func canCombine(alg checksum.Algorithm) bool {
	_, ok := reflectedPolys[alg]
	return ok
}

// partChecksum is one part's stored checksum and length.
type partChecksum struct {
	value string // base64
	size  int64
}

// combineFullObject returns the whole-object CRC (base64) of parts in order.
func combineFullObject(alg checksum.Algorithm, parts []partChecksum) (string, error) {
	p, ok := reflectedPolys[alg]
	if !ok {
		return "", fmt.Errorf("%w: %s cannot be a full-object multipart checksum", checksum.ErrInvalidChecksumRequest, alg)
	}
	var crc uint64
	for i, part := range parts {
		b, err := alg.Decode(part.value)
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
		crc = crcCombine(p.poly, p.width, crc, c, part.size)
	}
	out := make([]byte, p.width/8)
	if p.width == 32 {
		binary.BigEndian.PutUint32(out, uint32(crc))
	} else {
		binary.BigEndian.PutUint64(out, crc)
	}
	return checksum.Encode(out), nil
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

// multipartETag is S3's ETag of a completed upload: the hex MD5 of the concatenated binary
// MD5s of its parts, "-", the number of parts.
func multipartETag(partETags []string) (string, error) {
	h := md5.New()
	for i, e := range partETags {
		b, err := hex.DecodeString(e)
		if err != nil || len(b) != 16 {
			return "", fmt.Errorf("part %d has ETag %q, not an MD5: %w", i+1, e, errInvalidPart)
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)) + "-" + strconv.Itoa(len(partETags)), nil
}
