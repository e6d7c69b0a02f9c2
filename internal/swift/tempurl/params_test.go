package tempurl

import (
	"net/url"
	"testing"
)

func FuzzReadTempURLParams(f *testing.F) {
	f.Add("da39a3ee5e6b4b0d3255bfef95601890afd80709", "1700000000", "p/")
	f.Add("sha256:AAAA", "2026-11-22T15:04:05Z", "")
	f.Fuzz(func(t *testing.T, sig, expires, prefix string) {
		p := readTempURLParams(url.Values{"temp_url_sig": {sig}, "temp_url_expires": {expires}, "temp_url_prefix": {prefix}})
		if p.sig != sig || p.prefix != prefix || !p.hasSig || !p.hasExpires || !p.hasPrefix {
			t.Fatalf("readTempURLParams lost a parameter: %+v", p)
		}
	})
}
