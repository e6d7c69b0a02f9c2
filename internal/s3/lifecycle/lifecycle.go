// Package lifecycle holds S3's bucket lifecycle configuration: the
// PutBucketLifecycleConfiguration document, its validation with S3's refusals, and the
// evaluation of its rules against one object version or multipart upload. It is pure logic:
// the S3 front end stores the configuration (in the bucket's container metadata, under
// MetaKey) and the lifecycle daemon walks the buckets and applies what this package decides.
//
// S3's rules, as AWS documents them ("Lifecycle configuration elements"):
//   - A configuration has 1 to 1000 rules, each with an ID (at most 255 characters, unique;
//     one is made up when absent), a Status (Enabled or Disabled), a scope (a Filter, or the
//     legacy top-level Prefix) and at least one action.
//   - A Filter holds one of Prefix, Tag, ObjectSizeGreaterThan, ObjectSizeLessThan, or an And
//     of several; an object is in scope when it matches every condition.
//   - Expiration (Days, Date at midnight UTC, or ExpiredObjectDeleteMarker alone) acts on
//     current versions; NoncurrentVersionExpiration (NoncurrentDays, NewerNoncurrentVersions)
//     on noncurrent ones; AbortIncompleteMultipartUpload (DaysAfterInitiation) on uploads, and
//     cannot be scoped by tags.
//   - Days are counted from the object's creation (a noncurrent version's: from when it became
//     noncurrent), and the action is due at the next midnight UTC after that many days.
//
// Transitions (Transition, NoncurrentVersionTransition) move objects between storage classes,
// which Cairn does not have: a configuration with one is refused (NotImplemented) rather than
// accepted and silently not applied.
package lifecycle

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// MetaKey is the key of the bucket's container metadata holding its lifecycle configuration
// (Config.Encode; absent or empty: none). A sys: key: the Swift API neither shows nor changes it.
const MetaKey = "sys:s3-lifecycle"

// Limits S3 puts on a configuration.
const (
	MaxRules    = 1000
	MaxIDLength = 255
	// MaxDocument bounds the request body: 1000 rules of a few hundred bytes each fit.
	MaxDocument = 1 << 20
	// MaxNewerNoncurrent is the most NewerNoncurrentVersions may keep.
	MaxNewerNoncurrent = 100
)

// Kind is the S3 error a refused configuration is answered with.
type Kind int

const (
	MalformedXML Kind = iota
	InvalidArgument
	InvalidRequest
	NotImplemented
)

// Error is a refused configuration: its kind and S3's message.
type Error struct {
	Kind    Kind
	Message string
}

func (e *Error) Error() string { return "lifecycle: " + e.Message }

func refuse(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Tag is an object tag a filter requires.
type Tag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

// Filter is a rule's scope; zero fields do not restrict.
type Filter struct {
	Prefix string
	Tags   []Tag
	// SizeGreaterThan and SizeLessThan bound the object's size, exclusively (0: no bound; S3's
	// ObjectSizeGreaterThan of 0 excludes nothing but empty objects, which is kept apart by
	// HasGreater).
	SizeGreaterThan, SizeLessThan int64
	HasGreater, HasLess           bool
}

// Rule is one validated rule.
type Rule struct {
	ID      string
	Enabled bool
	Filter  Filter
	// LegacyPrefix: the rule was given the deprecated top-level Prefix rather than a Filter,
	// and is answered in that form, as S3 keeps a configuration as it was given.
	LegacyPrefix bool
	// Expiration of current versions: after ExpireDays (0: none), or from ExpireDate on (zero:
	// none).
	ExpireDays int
	ExpireDate time.Time
	// ExpiredObjectDeleteMarker removes a delete marker that is the only version left.
	ExpiredObjectDeleteMarker bool
	// NoncurrentDays (0: none) expires noncurrent versions that long after they became
	// noncurrent, keeping the NewerNoncurrent newest of them.
	NoncurrentDays  int
	NewerNoncurrent int
	// AbortDays (0: none) aborts multipart uploads that long after their initiation.
	AbortDays int
}

// Config is a bucket's validated lifecycle configuration.
type Config struct {
	Rules []Rule
}

// XML documents, as PutBucketLifecycleConfiguration sends them. Pointers tell an element
// absent from one present but empty.
type document struct {
	XMLName xml.Name  `xml:"LifecycleConfiguration"`
	Xmlns   string    `xml:"xmlns,attr,omitempty"`
	Rules   []xmlRule `xml:"Rule"`
}

type xmlRule struct {
	ID                             *string        `xml:"ID"`
	Prefix                         *string        `xml:"Prefix"`
	Filter                         *xmlFilter     `xml:"Filter"`
	Status                         string         `xml:"Status"`
	Expiration                     *xmlExpiration `xml:"Expiration"`
	NoncurrentVersionExpiration    *xmlNoncurrent `xml:"NoncurrentVersionExpiration"`
	AbortIncompleteMultipartUpload *xmlAbort      `xml:"AbortIncompleteMultipartUpload"`
	Transition                     []xmlAny       `xml:"Transition"`
	NoncurrentVersionTransition    []xmlAny       `xml:"NoncurrentVersionTransition"`
}

type xmlAny struct {
	Inner string `xml:",innerxml"`
}

type xmlFilter struct {
	Prefix                *string `xml:"Prefix"`
	Tag                   []Tag   `xml:"Tag"`
	ObjectSizeGreaterThan *int64  `xml:"ObjectSizeGreaterThan"`
	ObjectSizeLessThan    *int64  `xml:"ObjectSizeLessThan"`
	And                   *xmlAnd `xml:"And"`
}

type xmlAnd struct {
	Prefix                *string `xml:"Prefix"`
	Tag                   []Tag   `xml:"Tag"`
	ObjectSizeGreaterThan *int64  `xml:"ObjectSizeGreaterThan"`
	ObjectSizeLessThan    *int64  `xml:"ObjectSizeLessThan"`
}

type xmlExpiration struct {
	Days                      *int    `xml:"Days"`
	Date                      *string `xml:"Date"`
	ExpiredObjectDeleteMarker *bool   `xml:"ExpiredObjectDeleteMarker"`
}

type xmlNoncurrent struct {
	NoncurrentDays          *int `xml:"NoncurrentDays"`
	NewerNoncurrentVersions *int `xml:"NewerNoncurrentVersions"`
}

type xmlAbort struct {
	DaysAfterInitiation *int `xml:"DaysAfterInitiation"`
}

// Parse reads and validates a PutBucketLifecycleConfiguration document. Rules without an ID
// get newID's (S3 makes one up); newID may be nil when every rule has one.
func Parse(data []byte, newID func() string) (*Config, error) {
	var doc document
	dec := xml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, refuse(MalformedXML, "The XML you provided was not well-formed or did not validate against our published schema")
	}
	if len(doc.Rules) == 0 {
		return nil, refuse(MalformedXML, "The XML you provided was not well-formed or did not validate against our published schema")
	}
	if len(doc.Rules) > MaxRules {
		return nil, refuse(InvalidRequest, "The number of lifecycle rules should not exceed allowed limit of %d rules", MaxRules)
	}
	cfg := &Config{Rules: make([]Rule, 0, len(doc.Rules))}
	ids := map[string]bool{}
	for _, x := range doc.Rules {
		r, err := parseRule(x)
		if err != nil {
			return nil, err
		}
		if x.ID == nil || *x.ID == "" {
			if newID == nil {
				return nil, refuse(MalformedXML, "A rule has no ID")
			}
			r.ID = newID()
		}
		if ids[r.ID] {
			return nil, refuse(InvalidArgument, "Found two rules with same ID")
		}
		ids[r.ID] = true
		cfg.Rules = append(cfg.Rules, r)
	}
	return cfg, nil
}

var malformed = refuse(MalformedXML, "The XML you provided was not well-formed or did not validate against our published schema")

func parseRule(x xmlRule) (Rule, error) {
	var r Rule
	if x.ID != nil {
		if utf8.RuneCountInString(*x.ID) > MaxIDLength {
			return r, refuse(InvalidArgument, "ID length should not exceed allowed limit of %d", MaxIDLength)
		}
		r.ID = *x.ID
	}
	switch x.Status {
	case "Enabled":
		r.Enabled = true
	case "Disabled":
	default:
		return r, malformed
	}
	if len(x.Transition) > 0 || len(x.NoncurrentVersionTransition) > 0 {
		return r, refuse(NotImplemented, "Transitions are not implemented: Cairn has a single storage class.")
	}
	// The scope: a Filter or the legacy Prefix, one of them.
	switch {
	case x.Filter != nil && x.Prefix != nil, x.Filter == nil && x.Prefix == nil:
		return r, malformed
	case x.Prefix != nil:
		r.Filter.Prefix, r.LegacyPrefix = *x.Prefix, true
	default:
		f, err := parseFilter(x.Filter)
		if err != nil {
			return r, err
		}
		r.Filter = f
	}
	if x.Expiration == nil && x.NoncurrentVersionExpiration == nil && x.AbortIncompleteMultipartUpload == nil {
		return r, refuse(InvalidRequest, "At least one action needs to be specified in a rule")
	}
	if e := x.Expiration; e != nil {
		n := 0
		for _, set := range []bool{e.Days != nil, e.Date != nil, e.ExpiredObjectDeleteMarker != nil} {
			if set {
				n++
			}
		}
		// Exactly one of Days, Date and ExpiredObjectDeleteMarker: the last "cannot be
		// specified with Days or Date" (S3 answers MalformedXML).
		if n != 1 {
			return r, malformed
		}
		switch {
		case e.Days != nil:
			if *e.Days <= 0 {
				return r, refuse(InvalidArgument, "'Days' for Expiration action must be a positive integer")
			}
			r.ExpireDays = *e.Days
		case e.Date != nil:
			d, err := time.Parse(time.RFC3339, strings.TrimSpace(*e.Date))
			if err != nil {
				return r, refuse(InvalidArgument, "Date must be in ISO 8601 format")
			}
			d = d.UTC()
			if !d.Equal(d.Truncate(24 * time.Hour)) {
				return r, refuse(InvalidArgument, "'Date' must be at midnight GMT")
			}
			r.ExpireDate = d
		default:
			if len(r.Filter.Tags) > 0 {
				return r, refuse(InvalidRequest, "ExpiredObjectDeleteMarker cannot be specified with tags.")
			}
			r.ExpiredObjectDeleteMarker = *e.ExpiredObjectDeleteMarker
		}
	}
	if n := x.NoncurrentVersionExpiration; n != nil {
		if n.NoncurrentDays == nil || *n.NoncurrentDays <= 0 {
			return r, refuse(InvalidArgument, "'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer")
		}
		r.NoncurrentDays = *n.NoncurrentDays
		if v := n.NewerNoncurrentVersions; v != nil {
			if *v <= 0 || *v > MaxNewerNoncurrent {
				return r, refuse(InvalidArgument, "'NewerNoncurrentVersions' for NoncurrentVersionExpiration action must be a positive integer up to %d", MaxNewerNoncurrent)
			}
			r.NewerNoncurrent = *v
		}
	}
	if a := x.AbortIncompleteMultipartUpload; a != nil {
		if a.DaysAfterInitiation == nil || *a.DaysAfterInitiation <= 0 {
			return r, refuse(InvalidArgument, "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer")
		}
		if len(r.Filter.Tags) > 0 {
			return r, refuse(InvalidRequest, "AbortIncompleteMultipartUpload cannot be specified with Tags.")
		}
		r.AbortDays = *a.DaysAfterInitiation
	}
	return r, nil
}

func parseFilter(x *xmlFilter) (Filter, error) {
	var f Filter
	n := 0
	if x.Prefix != nil {
		n++
		f.Prefix = *x.Prefix
	}
	if len(x.Tag) > 1 {
		return f, malformed // a Filter holds one Tag; several go in an And
	}
	if len(x.Tag) == 1 {
		n++
		f.Tags = x.Tag
	}
	if x.ObjectSizeGreaterThan != nil {
		n++
		f.SizeGreaterThan, f.HasGreater = *x.ObjectSizeGreaterThan, true
	}
	if x.ObjectSizeLessThan != nil {
		n++
		f.SizeLessThan, f.HasLess = *x.ObjectSizeLessThan, true
	}
	if x.And != nil {
		n++
		a := x.And
		if a.Prefix != nil {
			f.Prefix = *a.Prefix
		}
		f.Tags = a.Tag
		if a.ObjectSizeGreaterThan != nil {
			f.SizeGreaterThan, f.HasGreater = *a.ObjectSizeGreaterThan, true
		}
		if a.ObjectSizeLessThan != nil {
			f.SizeLessThan, f.HasLess = *a.ObjectSizeLessThan, true
		}
	}
	// One condition, or an And of them (an empty Filter is every object).
	if n > 1 {
		return f, malformed
	}
	seen := map[string]bool{}
	for _, t := range f.Tags {
		if t.Key == "" || utf8.RuneCountInString(t.Key) > 128 {
			return f, refuse(InvalidArgument, "The TagKey you have provided is invalid")
		}
		if utf8.RuneCountInString(t.Value) > 256 {
			return f, refuse(InvalidArgument, "The TagValue you have provided is invalid")
		}
		if seen[t.Key] {
			return f, refuse(InvalidRequest, "Duplicate Tag Keys are not allowed.")
		}
		seen[t.Key] = true
	}
	if (f.HasGreater && f.SizeGreaterThan < 0) || (f.HasLess && f.SizeLessThan <= 0) {
		return f, refuse(InvalidArgument, "Object size must be a positive integer")
	}
	if f.HasGreater && f.HasLess && f.SizeGreaterThan >= f.SizeLessThan {
		return f, refuse(InvalidArgument, "ObjectSizeGreaterThan must be less than ObjectSizeLessThan")
	}
	return f, nil
}

// Encode is the configuration as stored and as GetBucketLifecycleConfiguration answers it.
func (c *Config) Encode() string {
	doc := document{Xmlns: "http://s3.amazonaws.com/doc/2006-03-01/"}
	for _, r := range c.Rules {
		x := xmlRule{ID: ptr(r.ID), Status: "Disabled", Filter: &xmlFilter{}}
		if r.Enabled {
			x.Status = "Enabled"
		}
		f := r.Filter
		conds := 0
		if f.Prefix != "" {
			conds++
		}
		conds += len(f.Tags)
		if f.HasGreater {
			conds++
		}
		if f.HasLess {
			conds++
		}
		switch {
		case r.LegacyPrefix:
			x.Filter, x.Prefix = nil, ptr(f.Prefix)
		case conds > 1:
			a := &xmlAnd{Tag: f.Tags}
			if f.Prefix != "" {
				a.Prefix = ptr(f.Prefix)
			}
			if f.HasGreater {
				a.ObjectSizeGreaterThan = ptr(f.SizeGreaterThan)
			}
			if f.HasLess {
				a.ObjectSizeLessThan = ptr(f.SizeLessThan)
			}
			x.Filter.And = a
		case len(f.Tags) == 1:
			x.Filter.Tag = f.Tags
		case f.HasGreater:
			x.Filter.ObjectSizeGreaterThan = ptr(f.SizeGreaterThan)
		case f.HasLess:
			x.Filter.ObjectSizeLessThan = ptr(f.SizeLessThan)
		default:
			x.Filter.Prefix = ptr(f.Prefix)
		}
		switch {
		case r.ExpireDays > 0:
			x.Expiration = &xmlExpiration{Days: ptr(r.ExpireDays)}
		case !r.ExpireDate.IsZero():
			x.Expiration = &xmlExpiration{Date: ptr(r.ExpireDate.Format("2006-01-02T15:04:05.000Z"))}
		case r.ExpiredObjectDeleteMarker:
			x.Expiration = &xmlExpiration{ExpiredObjectDeleteMarker: ptr(true)}
		}
		if r.NoncurrentDays > 0 {
			x.NoncurrentVersionExpiration = &xmlNoncurrent{NoncurrentDays: ptr(r.NoncurrentDays)}
			if r.NewerNoncurrent > 0 {
				x.NoncurrentVersionExpiration.NewerNoncurrentVersions = ptr(r.NewerNoncurrent)
			}
		}
		if r.AbortDays > 0 {
			x.AbortIncompleteMultipartUpload = &xmlAbort{DaysAfterInitiation: ptr(r.AbortDays)}
		}
		doc.Rules = append(doc.Rules, x)
	}
	out, err := xml.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("lifecycle: encoding: %v", err)) // fixed structs: a programming error
	}
	return string(out)
}

// Decode reads a stored configuration ("": none, nil).
func Decode(s string) (*Config, error) {
	if s == "" {
		return nil, nil
	}
	c, err := Parse([]byte(s), nil)
	if err != nil {
		return nil, fmt.Errorf("stored lifecycle configuration: %w", err)
	}
	return c, nil
}

func ptr[T any](v T) *T { return &v }

// IsError reports whether err is a refused configuration, and returns it.
func IsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
