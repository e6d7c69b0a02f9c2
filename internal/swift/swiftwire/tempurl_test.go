package swiftwire

import (
	"strings"
	"testing"
)

func FuzzParseTempURLSig(f *testing.F) {
	for _, s := range []string{"da39a3ee5e6b4b0d3255bfef95601890afd80709", "sha256:AAAA", "sha512:_-_-", "md5:", "zz", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		alg, mac, ok := ParseTempURLSig(s)
		if !ok {
			return
		}
		if !strings.Contains(s, ":") && len(mac) != map[string]int{"sha1": 20, "sha256": 32, "sha512": 64}[alg] {
			t.Fatalf("ParseTempURLSig(%q) = %s, %d bytes", s, alg, len(mac))
		}
	})
}
