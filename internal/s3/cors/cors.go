// Package cors holds S3's bucket CORS configuration: the PutBucketCors document, its
// validation with S3's refusals, and how a request is matched against its rules and answered.
// It is pure logic: the S3 front end reads and stores the configuration (in the bucket's
// container metadata, under MetaKey) and applies what this package decides.
//
// S3's rules, which this package follows (AWS's API reference and user guide, and what s3-tests
// and recordings of S3 show):
//   - A configuration has 1 to 100 rules; each needs at least one AllowedOrigin and one
//     AllowedMethod (GET, PUT, POST, DELETE or HEAD), and has at most one ID (255 characters
//     at most) and one MaxAgeSeconds.
//   - AllowedOrigin and AllowedHeader may hold one "*" wildcard each, which matches any run of
//     characters, the empty one included; ExposeHeader may hold none.
//   - A request is served by the first rule whose AllowedOrigin matches its Origin (exactly,
//     case-sensitively), whose AllowedMethod holds its method (a preflight's
//     Access-Control-Request-Method), and, for a preflight, whose AllowedHeaders match every
//     header of Access-Control-Request-Headers (without regard to case).
package cors

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/s3/s3xml"
)

// MetaKey is the key of the bucket's container metadata holding its CORS configuration
// (Config.Encode; absent or empty: none). It is a sys: key, so the Swift API neither shows nor
// changes it: Swift's container CORS (X-Container-Meta-Access-Control-*) is a setting of its own.
const MetaKey = "sys:s3-cors"

// Limits S3 puts on a configuration.
const (
	MaxRules     = 100
	MaxIDLength  = 255
	MaxDocument  = 64 << 10 // "The document is limited to 64 KB in size."
	wildcardRune = "*"
)

// Methods are the only methods a rule may allow.
var Methods = []string{"GET", "PUT", "POST", "DELETE", "HEAD"}

// Kind is the class of S3 error a refused configuration gets.
type Kind int

// Kinds of refusal: the S3 error codes MalformedXML, InvalidRequest and InvalidArgument.
const (
	Malformed Kind = iota + 1
	InvalidRequest
	InvalidArgument
)

// Error is a refused configuration. Message is S3's text for InvalidRequest and
// InvalidArgument; a Malformed refusal is answered with MalformedXML's fixed text, and its
// Message says why, for logs.
type Error struct {
	Kind    Kind
	Message string
}

func (e *Error) Error() string { return "cors: " + e.Message }

func malformed(format string, args ...any) error {
	return &Error{Kind: Malformed, Message: fmt.Sprintf(format, args...)}
}

// Rule is one CORS rule.
type Rule struct {
	ID             string
	AllowedOrigins []string
	AllowedMethods []string
	AllowedHeaders []string
	ExposeHeaders  []string
	MaxAgeSeconds  *int // nil: not set (no Access-Control-Max-Age)
}

// Config is a bucket's CORS configuration: its rules, in order.
type Config struct {
	Rules []Rule
}

// ruleInput is a CORSRule as sent: lists for the single-valued members too, so that a
// duplicate is seen, and any other element caught.
type ruleInput struct {
	IDs            []string   `xml:"ID"`
	AllowedHeaders []string   `xml:"AllowedHeader"`
	AllowedMethods []string   `xml:"AllowedMethod"`
	AllowedOrigins []string   `xml:"AllowedOrigin"`
	ExposeHeaders  []string   `xml:"ExposeHeader"`
	MaxAge         []string   `xml:"MaxAgeSeconds"`
	Other          []anyInput `xml:",any"`
}

type anyInput struct {
	XMLName xml.Name
}

type documentInput struct {
	XMLName xml.Name    `xml:"CORSConfiguration"`
	Rules   []ruleInput `xml:"CORSRule"`
	Other   []anyInput  `xml:",any"`
}

// Parse reads and validates a CORSConfiguration document. Errors are *Error. As S3 does, the
// structure of every rule is checked before the values of any (a document with both kinds of
// fault is MalformedXML).
func Parse(body []byte) (*Config, error) {
	var in documentInput
	if err := decodeStrict(body, &in); err != nil {
		return nil, err
	}
	if len(in.Other) > 0 {
		return nil, malformed("unknown element %q in CORSConfiguration", in.Other[0].XMLName.Local)
	}
	if len(in.Rules) == 0 {
		return nil, malformed("no CORSRule")
	}
	if len(in.Rules) > MaxRules {
		return nil, malformed("%d CORSRules, at most %d allowed", len(in.Rules), MaxRules)
	}
	for i, r := range in.Rules {
		switch {
		case len(r.Other) > 0:
			return nil, malformed("rule %d: unknown element %q", i+1, r.Other[0].XMLName.Local)
		case len(r.AllowedOrigins) == 0:
			return nil, malformed("rule %d: no AllowedOrigin", i+1)
		case len(r.AllowedMethods) == 0:
			return nil, malformed("rule %d: no AllowedMethod", i+1)
		case len(r.IDs) > 1:
			return nil, malformed("rule %d: more than one ID", i+1)
		case len(r.MaxAge) > 1:
			return nil, malformed("rule %d: more than one MaxAgeSeconds", i+1)
		}
	}
	cfg := &Config{Rules: make([]Rule, 0, len(in.Rules))}
	for i, r := range in.Rules {
		rule, err := r.validate(i + 1)
		if err != nil {
			return nil, err
		}
		cfg.Rules = append(cfg.Rules, rule)
	}
	return cfg, nil
}

func (r ruleInput) validate(n int) (Rule, error) {
	rule := Rule{
		AllowedOrigins: trimAll(r.AllowedOrigins),
		AllowedMethods: trimAll(r.AllowedMethods),
		AllowedHeaders: trimAll(r.AllowedHeaders),
		ExposeHeaders:  trimAll(r.ExposeHeaders),
	}
	for _, m := range rule.AllowedMethods {
		if !isMethod(m) {
			return Rule{}, &Error{Kind: InvalidRequest, Message: "Found unsupported HTTP method in CORS config. Unsupported method is " + m}
		}
	}
	for _, o := range rule.AllowedOrigins {
		if strings.Count(o, wildcardRune) > 1 {
			return Rule{}, &Error{Kind: InvalidRequest, Message: fmt.Sprintf("AllowedOrigin %q can not have more than one wildcard.", o)}
		}
	}
	for _, h := range rule.AllowedHeaders {
		if strings.Count(h, wildcardRune) > 1 {
			return Rule{}, &Error{Kind: InvalidRequest, Message: fmt.Sprintf("AllowedHeader %q can not have more than one wildcard.", h)}
		}
	}
	for _, h := range rule.ExposeHeaders {
		if strings.Contains(h, wildcardRune) {
			return Rule{}, &Error{Kind: InvalidRequest, Message: fmt.Sprintf("ExposeHeader %q contains wildcard. We currently do not support wildcard for ExposeHeader.", h)}
		}
	}
	if len(r.IDs) == 1 {
		rule.ID = strings.TrimSpace(r.IDs[0])
		if len(rule.ID) > MaxIDLength {
			return Rule{}, &Error{Kind: InvalidArgument, Message: fmt.Sprintf("The ID of CORSRule %d is longer than %d characters.", n, MaxIDLength)}
		}
	}
	if len(r.MaxAge) == 1 {
		v, err := strconv.Atoi(strings.TrimSpace(r.MaxAge[0]))
		if err != nil {
			return Rule{}, malformed("rule %d: MaxAgeSeconds %.40q is not an integer", n, r.MaxAge[0])
		}
		if v < 0 {
			return Rule{}, &Error{Kind: InvalidArgument, Message: fmt.Sprintf("MaxAgeSeconds of CORSRule %d must not be negative.", n)}
		}
		rule.MaxAgeSeconds = &v
	}
	return rule, nil
}

func isMethod(m string) bool {
	for _, x := range Methods {
		if m == x {
			return true
		}
	}
	return false
}

func trimAll(vs []string) []string {
	if len(vs) == 0 {
		return nil
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = strings.TrimSpace(v)
	}
	return out
}

// decodeStrict parses one CORSConfiguration element and refuses anything after it but
// whitespace, comments and processing instructions.
func decodeStrict(body []byte, v any) error {
	dec := xml.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return malformed("%v", err)
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return malformed("after the document: %v", err)
		}
		switch t := tok.(type) {
		case xml.CharData:
			if len(bytes.TrimSpace(t)) != 0 {
				return malformed("text after the document")
			}
		case xml.Comment, xml.ProcInst:
		default:
			return malformed("content after the document")
		}
	}
}

// Document is the configuration as GetBucketCors answers it: only the members each rule was
// given, in S3's element order.
func (c *Config) Document() s3xml.CORSConfiguration {
	doc := s3xml.CORSConfiguration{Xmlns: s3xml.Namespace, Rules: make([]s3xml.CORSRule, 0, len(c.Rules))}
	for _, r := range c.Rules {
		doc.Rules = append(doc.Rules, s3xml.CORSRule{
			ID: r.ID, AllowedHeaders: r.AllowedHeaders, AllowedMethods: r.AllowedMethods,
			AllowedOrigins: r.AllowedOrigins, ExposeHeaders: r.ExposeHeaders, MaxAgeSeconds: r.MaxAgeSeconds,
		})
	}
	return doc
}

// Encode is the configuration as it is stored (MetaKey): its document, which Decode parses
// and validates again.
func (c *Config) Encode() string {
	b, err := xml.Marshal(c.Document())
	if err != nil {
		// A Document is plain strings and numbers; failing to encode one is a programming error.
		panic(fmt.Sprintf("cors: encoding a configuration: %v", err))
	}
	return string(b)
}

// Decode reads a stored configuration: nil for none (an empty value).
func Decode(stored string) (*Config, error) {
	if stored == "" {
		return nil, nil
	}
	c, err := Parse([]byte(stored))
	if err != nil {
		return nil, fmt.Errorf("stored CORS configuration: %w", err)
	}
	return c, nil
}
