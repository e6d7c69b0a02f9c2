package swiftwire

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// PyQuote percent-encodes every byte but letters, digits, "_.-~" and "/", as Python's
// urllib quote does: Swift quotes so the account in WWW-Authenticate and the paths in bulk
// answers.
func PyQuote(s string) string { return PyQuoteSafe(s, "/") }

// PyQuoteSafe is Python's quote with its safe characters.
func PyQuoteSafe(s, safe string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_.-~", c) >= 0 || strings.IndexByte(safe, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// PyRepr quotes a string as Python's repr does for plain text (Swift's messages use it).
func PyRepr(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

// HumanReadable is Swift's human_readable: bytes in binary units, rounded ("1Ki", "5Mi").
func HumanReadable(n int64) string {
	const suffixes = "KMGTPEZY"
	v, i := float64(n), -1
	for v >= 1024 && i+1 < len(suffixes) {
		i++
		v = math.RoundToEven(v / 1024) // Python's round
	}
	if i < 0 {
		return strconv.FormatInt(n, 10)
	}
	return fmt.Sprintf("%d%ci", int64(v), suffixes[i])
}

// Truthy is Swift's config_true_value.
func Truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "on", "t", "y":
		return true
	}
	return false
}

func IsDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
