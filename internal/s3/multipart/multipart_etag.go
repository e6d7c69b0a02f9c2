package multipart

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/cairn-store/cairn/internal/s3/s3core"
)

// multipartETag is S3's ETag of a completed upload: the hex MD5 of the concatenated binary
// MD5s of its parts, "-", the number of parts.
func multipartETag(partETags []string) (string, error) {
	h := md5.New()
	for i, e := range partETags {
		b, err := hex.DecodeString(e)
		if err != nil || len(b) != 16 {
			return "", fmt.Errorf("part %d has ETag %q, not an MD5: %w", i+1, e, s3core.ErrInvalidPart)
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)) + "-" + strconv.Itoa(len(partETags)), nil
}
