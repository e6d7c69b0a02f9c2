package multipart

import (
	"errors"
	"testing"

	"github.com/cairn-store/cairn/internal/s3/s3core"
)

func TestMultipartETag(t *testing.T) {
	// Two parts whose MD5s are those of "a" and "b".
	got, err := multipartETag([]string{"0cc175b9c0f1b6a831c399e269772661", "92eb5ffee6ae2fec3ad71c777531578f"})
	// hex(md5(md5("a") || md5("b"))), computed independently.
	if err != nil || got != "96e024ba2074fe77e8e965ba43a704be-2" {
		t.Fatalf("multipartETag: %q %v", got, err)
	}
	if _, err := multipartETag([]string{"nothex"}); !errors.Is(err, s3core.ErrInvalidPart) {
		t.Fatalf("bad part ETag: %v", err)
	}
}
