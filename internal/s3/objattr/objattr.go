// Package objattr reads the request of GetObjectAttributes (GET ?attributes): which attributes
// x-amz-object-attributes asks for, and the page of parts x-amz-max-parts and
// x-amz-part-number-marker select. It is pure; its refusals are *Error values that the front
// end answers as InvalidArgument with their message.
package objattr

import (
	"errors"
	"strconv"
	"strings"
)

// ErrInvalidArgument is what every refusal wraps: S3's InvalidArgument.
var ErrInvalidArgument = errors.New("InvalidArgument")

// Error is a refusal, answered as S3's InvalidArgument with Message.
type Error struct{ Message string }

func (e *Error) Error() string     { return "InvalidArgument: " + e.Message }
func (e *Error) Unwrap() error     { return ErrInvalidArgument }
func (e *Error) S3Message() string { return e.Message }

// Attributes are what x-amz-object-attributes asks for.
type Attributes struct {
	ETag, Checksum, ObjectParts, StorageClass, ObjectSize bool
}

// Parse reads x-amz-object-attributes: one or more comma-separated names (the header may be
// repeated) of ETag, Checksum, ObjectParts, StorageClass and ObjectSize, in S3's spelling. A
// missing or empty header, or an unknown name, is refused, as S3 does.
func Parse(values []string) (Attributes, error) {
	var a Attributes
	any := false
	for _, v := range values {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			switch name {
			case "ETag":
				a.ETag = true
			case "Checksum":
				a.Checksum = true
			case "ObjectParts":
				a.ObjectParts = true
			case "StorageClass":
				a.StorageClass = true
			case "ObjectSize":
				a.ObjectSize = true
			default:
				return Attributes{}, &Error{Message: "Invalid attribute name specified."}
			}
			any = true
		}
	}
	if !any {
		return Attributes{}, &Error{Message: "The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty"}
	}
	return a, nil
}

// MaxParts is the most parts one answer lists, and the default, as in S3.
const MaxParts = 1000

// Paging is the page of parts asked for.
type Paging struct {
	Max    int // 1..MaxParts (a larger value is reduced to it, as ListParts does)
	Marker int // list the parts after this number; 0 from the first
}

// ParsePaging reads x-amz-max-parts and x-amz-part-number-marker: non-negative integers
// (empty: the defaults). Anything else is refused.
func ParsePaging(maxParts, marker string) (Paging, error) {
	p := Paging{Max: MaxParts}
	if maxParts != "" {
		n, err := strconv.Atoi(maxParts)
		if err != nil || n < 0 {
			return Paging{}, &Error{Message: "Argument max-parts must be an integer between 0 and 2147483647"}
		}
		p.Max = min(n, MaxParts)
	}
	if marker != "" {
		n, err := strconv.Atoi(marker)
		if err != nil || n < 0 {
			return Paging{}, &Error{Message: "Argument part-number-marker must be an integer between 0 and 2147483647"}
		}
		p.Marker = n
	}
	return p, nil
}

// Page selects, of parts numbered 1..total, those the paging asks for: numbers first..last
// (an empty page when first > last), whether more follow, and the marker that continues.
func (p Paging) Page(total int) (first, last int, truncated bool, next int) {
	first = p.Marker + 1
	last = min(total, p.Marker+p.Max)
	if first > last {
		// Nothing listed: more follow only when max-parts was 0.
		return first, first - 1, p.Marker < total, p.Marker
	}
	truncated = last < total
	return first, last, truncated, last
}
