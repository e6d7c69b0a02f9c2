package sigv4

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// The AWS documentation's example derivation (secret wJalr…, 20150830, us-east-1, iam) uses
// service iam; ours is s3, so check the cache against an uncached derivation instead, for several
// secrets, days and regions, first and second time.
func TestSigningKeyCacheMatchesDerivation(t *testing.T) {
	derive := func(secret, date, region string) []byte {
		k := hmacSHA256([]byte("AWS4"+secret), date)
		k = hmacSHA256(k, region)
		k = hmacSHA256(k, service)
		return hmacSHA256(k, scopeTerminal)
	}
	for _, secret := range []string{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "other-secret", ""} {
		for _, date := range []string{"20261122", "20261123"} {
			for _, region := range []string{"us-east-1", "eu-west-1"} {
				want := derive(secret, date, region)
				for range 2 {
					if got := signingKey(secret, date, region); !bytes.Equal(got, want) {
						t.Fatalf("signingKey(%q, %s, %s) = %s, want %s", secret, date, region, hex.EncodeToString(got), hex.EncodeToString(want))
					}
				}
			}
		}
	}
	// A secret that contains the separator cannot alias another secret/date pair.
	if bytes.Equal(signingKey("a\x00b", "c", "r"), signingKey("a", "b\x00c", "r")) {
		t.Fatal("two different inputs share a cached key")
	}
}
