package swiftwire

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
)

// MaxRanges is Swift's limit on the ranges of one request; beyond it the header is ignored.
const MaxRanges = 50

// ParseRanges parses a Range header as Swift's swob does: "bytes=" and a comma-separated list
// of "first-last", "first-" or "-suffix". A header that is malformed in any part, not in bytes,
// or lists more than MaxRanges ranges is ignored (nil: the whole object is served).
func ParseRanges(h string) []meta.Range {
	// Swift accepts any case and whitespace around the unit and the '=' ("BYTES = 0 - 999").
	unit, spec, ok := strings.Cut(h, "=")
	if !ok || !strings.EqualFold(strings.TrimSpace(unit), "bytes") {
		return nil
	}
	parts := strings.Split(spec, ",")
	if len(parts) > MaxRanges {
		return nil
	}
	out := make([]meta.Range, 0, len(parts))
	for _, p := range parts {
		first, last, ok := strings.Cut(strings.TrimSpace(p), "-")
		if !ok {
			return nil
		}
		first, last = strings.TrimSpace(first), strings.TrimSpace(last)
		switch {
		case first == "":
			n, err := strconv.ParseInt(last, 10, 64)
			if err != nil || n < 0 {
				return nil
			}
			// bytes=-0 selects nothing: Resolve refuses a range starting at -1.
			out = append(out, meta.Range{Suffix: n, Start: -1, End: -1})
		default:
			start, err := strconv.ParseInt(first, 10, 64)
			if err != nil || start < 0 {
				return nil
			}
			end := int64(-1)
			if last != "" {
				if end, err = strconv.ParseInt(last, 10, 64); err != nil || end < start {
					return nil
				}
			}
			out = append(out, meta.Range{Start: start, End: end})
		}
	}
	return out
}

// ParseRange is ParseRanges for a header of one range (nil otherwise).
func ParseRange(h string) *meta.Range {
	rs := ParseRanges(h)
	if len(rs) != 1 {
		return nil
	}
	return &rs[0]
}

// span is one satisfiable range of an object.
type Span struct{ Offset, Length int64 }

// ResolveRanges keeps the ranges that select something in an object of the given size, in the
// order asked, as Swift does (unsatisfiable ones are dropped; none left is 416).
func ResolveRanges(rs []meta.Range, size int64) []Span {
	var out []Span
	for _, r := range rs {
		if off, n, err := r.Resolve(size); err == nil {
			out = append(out, Span{off, n})
		}
	}
	return out
}

// MultipartLayout is the framing of a multipart/byteranges body, as Swift writes it: each part
// "--B\r\nContent-Type: T\r\nContent-Range: bytes s-e/size\r\n\r\n<bytes>\r\n", then "--B--".
type MultipartLayout struct {
	Boundary, ContentType string
	Size                  int64
}

func (m MultipartLayout) PartHeader(s Span) string {
	return "--" + m.Boundary + "\r\nContent-Type: " + m.ContentType + "\r\nContent-Range: bytes " +
		strconv.FormatInt(s.Offset, 10) + "-" + strconv.FormatInt(s.Offset+s.Length-1, 10) + "/" + strconv.FormatInt(m.Size, 10) + "\r\n\r\n"
}

func (m MultipartLayout) Trailer() string { return "--" + m.Boundary + "--" }

func (m MultipartLayout) ContentLength(spans []Span) int64 {
	n := int64(len(m.Trailer()))
	for _, s := range spans {
		n += int64(len(m.PartHeader(s))) + s.Length + 2
	}
	return n
}

func NewBoundary() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
