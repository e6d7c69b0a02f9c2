// Package tagging holds S3's rules for object and bucket tags: reading a Tagging document or an
// x-amz-tagging header, validating a tag set as S3 does (counts, lengths, characters, unique
// keys, the reserved aws: prefix), and the form a tag set is stored in. It is pure: strings in,
// tag sets or refusals out. Refusals are *Error values naming one of the sentinels below and
// S3's own message, which the front end's error table turns into answers.
package tagging

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cairn-store/cairn/internal/s3/s3xml"
)

// S3's limits.
const (
	MaxObjectTags = 10
	MaxBucketTags = 50
	MaxKeyLen     = 128 // Unicode characters
	MaxValueLen   = 256
)

// Where tag sets are kept. An object's tags go with the object (its SysMeta), so that a copy,
// a replica and a metadata rewrite carry them; a bucket's are container metadata, as its
// other settings. The stored form is Set.Encode; empty means no tags.
const (
	ObjectSysMetaKey = "tagging"
	BucketMetaKey    = "sys:s3-tagging"
)

// Kinds of refusal, each an S3 error code. Error values wrap one of these.
var (
	// ErrInvalidTag: S3's InvalidTag (400), a key or value that breaks a rule.
	ErrInvalidTag = errors.New("InvalidTag")
	// ErrTooManyTags: S3 answers more tags than allowed with BadRequest (400).
	ErrTooManyTags = errors.New("BadRequest")
	// ErrMalformedXML: a Tagging document that does not parse or lacks a required element.
	ErrMalformedXML = errors.New("MalformedXML")
	// ErrInvalidHeader: an x-amz-tagging header that is not a URL query (InvalidArgument).
	ErrInvalidHeader = errors.New("InvalidArgument")
)

// Error is a refusal: the kind (one of the sentinels above), S3's message, and the tag key it
// is about when S3 names one (the TagKey element of its error document).
type Error struct {
	Kind    error
	Message string
	TagKey  string
}

func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Message }
func (e *Error) Unwrap() error { return e.Kind }

// S3Message is the message of S3's answer.
func (e *Error) S3Message() string { return e.Message }

// S3's messages, as its answers word them.
const (
	msgTooManyObjectTags = "Object tags cannot be greater than 10"
	msgTooManyBucketTags = "Bucket tag count cannot be greater than 50"
	msgInvalidKey        = "The TagKey you have provided is invalid"
	msgInvalidValue      = "The TagValue you have provided is invalid"
	msgDuplicateKey      = "Cannot provide multiple Tags with the same key"
	msgObjectAWSPrefix   = "Your TagKey cannot be prefixed with aws:"
	msgBucketAWSPrefix   = "System tags cannot be added/updated by requester"
	msgInvalidHeader     = "The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates."
	msgMalformedXML      = "The XML you provided was not well-formed or did not validate against our published schema"
)

// Kind says whose tags a set is: objects and buckets have different limits and messages.
type Kind uint8

const (
	Object Kind = iota
	Bucket
)

// Tag is one key and value.
type Tag struct{ Key, Value string }

// Set is a tag set in the order the client gave it.
type Set []Tag

// Validate applies S3's rules to a tag set: at most 10 tags on an object and 50 on a bucket,
// keys of 1 to 128 and values of 0 to 256 Unicode characters, made of letters, digits, white
// space and + - = . _ : / @, keys unique and not under the aws: prefix, which is AWS's own.
// The count is checked first, as S3 does: eleven good tags are BadRequest, not InvalidTag.
func Validate(s Set, k Kind) error {
	switch {
	case k == Object && len(s) > MaxObjectTags:
		return &Error{Kind: ErrTooManyTags, Message: msgTooManyObjectTags}
	case k == Bucket && len(s) > MaxBucketTags:
		return &Error{Kind: ErrTooManyTags, Message: msgTooManyBucketTags}
	}
	seen := make(map[string]bool, len(s))
	for _, t := range s {
		if !validText(t.Key, 1, MaxKeyLen) {
			return &Error{Kind: ErrInvalidTag, Message: msgInvalidKey, TagKey: t.Key}
		}
		if !validText(t.Value, 0, MaxValueLen) {
			return &Error{Kind: ErrInvalidTag, Message: msgInvalidValue, TagKey: t.Key}
		}
		if seen[t.Key] {
			return &Error{Kind: ErrInvalidTag, Message: msgDuplicateKey, TagKey: t.Key}
		}
		seen[t.Key] = true
		if len(t.Key) >= 4 && strings.EqualFold(t.Key[:4], "aws:") {
			msg := msgObjectAWSPrefix
			if k == Bucket {
				msg = msgBucketAWSPrefix
			}
			return &Error{Kind: ErrInvalidTag, Message: msg, TagKey: t.Key}
		}
	}
	return nil
}

// validText reports whether s is valid UTF-8 of min to max characters that S3 allows in tags.
func validText(s string, min, max int) bool {
	if !utf8.ValidString(s) {
		return false
	}
	n := utf8.RuneCountInString(s)
	if n < min || n > max {
		return false
	}
	for _, r := range s {
		if !allowedRune(r) {
			return false
		}
	}
	return true
}

// allowedRune: letters, digits and spaces of any script, and + - = . _ : / @ (AWS's tag
// rules). Control characters, tabs and newlines included, are not.
func allowedRune(r rune) bool {
	switch {
	case unicode.IsLetter(r), unicode.IsNumber(r), unicode.Is(unicode.Zs, r):
		return true
	}
	return strings.ContainsRune("+-=._:/@", r)
}

// ParseXML reads a Tagging document (PutObjectTagging, PutBucketTagging) and validates the
// set for k. A document that does not parse, has no TagSet, or a Tag without its Key or Value
// element is MalformedXML.
func ParseXML(body []byte, k Kind) (Set, error) {
	var doc s3xml.TaggingRequest
	if err := s3xml.DecodeStrict(body, &doc); err != nil {
		return nil, &Error{Kind: ErrMalformedXML, Message: msgMalformedXML}
	}
	if doc.TagSet == nil {
		return nil, &Error{Kind: ErrMalformedXML, Message: msgMalformedXML}
	}
	s := make(Set, 0, len(doc.TagSet.Tags))
	for _, t := range doc.TagSet.Tags {
		if t.Key == nil || t.Value == nil {
			return nil, &Error{Kind: ErrMalformedXML, Message: msgMalformedXML}
		}
		s = append(s, Tag{Key: *t.Key, Value: *t.Value})
	}
	if err := Validate(s, k); err != nil {
		return nil, err
	}
	return s, nil
}

// ParseHeader reads an x-amz-tagging header (PutObject, CopyObject with REPLACE,
// CreateMultipartUpload): URL query parameters, "k1=v1&k2=v2", each key once, validated as an
// object's tags. A key without "=" has the empty value; empty parameters are skipped, as in a
// URL query. A parameter with a second unescaped "=", a bad escape or a repeated key is
// InvalidArgument, as S3 answers.
func ParseHeader(v string) (Set, error) {
	s, err := parseQuery(v)
	if err != nil {
		return nil, err
	}
	if err := Validate(s, Object); err != nil {
		return nil, err
	}
	return s, nil
}

// parseQuery reads the query form of a tag set, keeping its order.
func parseQuery(v string) (Set, error) {
	bad := &Error{Kind: ErrInvalidHeader, Message: msgInvalidHeader}
	var s Set
	seen := map[string]bool{}
	for _, p := range strings.Split(v, "&") {
		if p == "" {
			continue
		}
		rk, rv, _ := strings.Cut(p, "=")
		if strings.Contains(rv, "=") {
			return nil, bad
		}
		key, err1 := url.QueryUnescape(rk)
		val, err2 := url.QueryUnescape(rv)
		if err1 != nil || err2 != nil || seen[key] {
			return nil, bad
		}
		seen[key] = true
		s = append(s, Tag{Key: key, Value: val})
	}
	return s, nil
}

// Encode is the stored form of a tag set: the query form of x-amz-tagging, in the set's order.
// The empty set encodes as "", which means "no tags" wherever a set is stored.
func (s Set) Encode() string {
	var b strings.Builder
	for i, t := range s {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(t.Key))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(t.Value))
	}
	return b.String()
}

// Decode reads a stored tag set (Encode). It was validated when it was written, so an error
// means damage or a newer writer.
func Decode(stored string) (Set, error) {
	s, err := parseQuery(stored)
	if err != nil {
		return nil, fmt.Errorf("stored tag set %.60q does not decode", stored)
	}
	return s, nil
}

// Document is the set as GetObjectTagging and GetBucketTagging answer it. An empty set is an
// empty TagSet element, as S3 answers for an object without tags.
func (s Set) Document() s3xml.Tagging {
	doc := s3xml.Tagging{Xmlns: s3xml.Namespace}
	for _, t := range s {
		doc.TagSet.Tags = append(doc.TagSet.Tags, s3xml.Tag{Key: t.Key, Value: t.Value})
	}
	return doc
}
