package postpolicy

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Condition operators. content-length-range is not a Condition: it bounds the file, not a
// field (Policy.MinLength, MaxLength).
const (
	OpEq         = "eq"
	OpStartsWith = "starts-with"
)

// Condition is one field condition of a policy.
type Condition struct {
	Op    string // OpEq or OpStartsWith
	Field string // lower-cased, without the "$"
	Value string
}

// String is the condition as S3 quotes it in a refusal: ["eq", "$key", "value"].
func (c Condition) String() string {
	b, _ := json.Marshal([]string{c.Op, "$" + c.Field, c.Value})
	return strings.ReplaceAll(string(b), `","`, `", "`)
}

// Policy is a decoded POST policy document.
type Policy struct {
	Expiration time.Time
	Conditions []Condition
	// HasLengthRange: the policy has a content-length-range, and the file must be between
	// MinLength and MaxLength bytes, inclusive (several ranges: all of them).
	HasLengthRange       bool
	MinLength, MaxLength int64
}

// ParsePolicy decodes the policy field: base64 of a JSON document with exactly the members
// "expiration" (an ISO 8601 time) and "conditions" (a list), named with their case.
// Errors are *Error wrapping ErrInvalidPolicyDocument, with S3's texts.
func ParsePolicy(b64 string) (*Policy, error) {
	// Whitespace is no part of base64, and some clients wrap long values.
	doc, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(b64), ""))
	if err != nil {
		return nil, invalidPolicy("Invalid Base64 Encoding.")
	}
	return DecodePolicy(doc)
}

func invalidPolicy(msg string) *Error {
	return refuse(ErrInvalidPolicyDocument, "Invalid Policy: %s", msg)
}

// DecodePolicy decodes a policy document's JSON.
func DecodePolicy(doc []byte) (*Policy, error) {
	var top map[string]json.RawMessage
	if err := decodeStrict(doc, &top); err != nil || top == nil {
		return nil, invalidPolicy("Invalid JSON.")
	}
	rawExp, ok := top["expiration"]
	if !ok {
		return nil, invalidPolicy("Policy missing expiration.")
	}
	var exp string
	if err := json.Unmarshal(rawExp, &exp); err != nil {
		return nil, invalidPolicy("Invalid 'expiration' value: " + string(rawExp))
	}
	t, err := time.Parse(time.RFC3339Nano, exp)
	if err != nil {
		return nil, invalidPolicy("Invalid 'expiration' value: '" + exp + "'")
	}
	rawConds, ok := top["conditions"]
	if !ok {
		return nil, invalidPolicy("Policy missing conditions.")
	}
	var conds []json.RawMessage
	if err := decodeStrict(rawConds, &conds); err != nil || conds == nil {
		return nil, invalidPolicy("Invalid 'conditions' value: it must be a list.")
	}
	p := &Policy{Expiration: t}
	for _, raw := range conds {
		if err := p.addCondition(raw); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// decodeStrict decodes one JSON value with numbers kept as written, and nothing after it.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

func (p *Policy) addCondition(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '{' {
		var m map[string]any
		if err := decodeStrict(raw, &m); err != nil {
			return invalidPolicy("Invalid JSON.")
		}
		if len(m) != 1 {
			return invalidPolicy("Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.")
		}
		for k, v := range m {
			s, ok := scalar(v)
			if !ok {
				return invalidPolicy("Invalid Simple-Condition: value must be a string.")
			}
			p.Conditions = append(p.Conditions, Condition{Op: OpEq, Field: strings.ToLower(strings.TrimPrefix(k, "$")), Value: s})
		}
		return nil
	}
	var list []any
	if err := decodeStrict(raw, &list); err != nil {
		return invalidPolicy("Invalid Condition: a condition must be an object or a list: " + string(raw))
	}
	if len(list) == 0 {
		return invalidPolicy("Invalid Condition: an empty list.")
	}
	op, _ := list[0].(string)
	switch op = strings.ToLower(op); op {
	case "content-length-range":
		return p.addLengthRange(list)
	case OpEq, OpStartsWith:
	default:
		return invalidPolicy("Invalid Condition: unknown operation '" + op + "' in " + string(raw))
	}
	if len(list) != 3 {
		return invalidPolicy("Invalid Condition: '" + op + "' takes a field and a value: " + string(raw))
	}
	field, _ := list[1].(string)
	value, ok := scalar(list[2])
	if !strings.HasPrefix(field, "$") || len(field) < 2 || !ok {
		return invalidPolicy("Invalid Condition: '" + op + "' takes a \"$field\" and a string value: " + string(raw))
	}
	p.Conditions = append(p.Conditions, Condition{Op: op, Field: strings.ToLower(field[1:]), Value: value})
	return nil
}

// scalar is a condition's value as text: a string, or a number as written.
func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	}
	return "", false
}

func (p *Policy) addLengthRange(list []any) error {
	if len(list) != 3 {
		return invalidPolicy("Invalid content-length-range: it takes a minimum and a maximum.")
	}
	var bounds [2]int64
	for i, v := range list[1:] {
		s, ok := scalar(v)
		n, err := strconv.ParseInt(s, 10, 64)
		if !ok || err != nil || n < 0 {
			return invalidPolicy("Invalid content-length-range: the bounds must be non-negative integers.")
		}
		bounds[i] = n
	}
	if bounds[0] > bounds[1] {
		return invalidPolicy("Invalid content-length-range: the minimum is larger than the maximum.")
	}
	if !p.HasLengthRange {
		p.HasLengthRange, p.MinLength, p.MaxLength = true, bounds[0], bounds[1]
		return nil
	}
	p.MinLength, p.MaxLength = max(p.MinLength, bounds[0]), min(p.MaxLength, bounds[1])
	return nil
}

// Exempt reports whether a form field needs no condition: the signature and policy fields,
// the file, x-ignore-* fields (S3's rule), and the x-amz-checksum-* fields, which can only
// make the upload fail (Ceph's RGW exempts them too, and its tests rely on it).
func Exempt(name string) bool {
	switch name {
	case "policy", "file", "x-amz-signature", "signature", "awsaccesskeyid":
		return true
	}
	return strings.HasPrefix(name, "x-ignore-") || strings.HasPrefix(name, "x-amz-checksum-")
}

// Check evaluates the policy against a form's fields at time now: not expired, every condition
// holds (a condition on a field the form lacks is evaluated against ""), and every field that
// is not Exempt is named by a condition. Errors are *Error wrapping ErrPolicyDenied, with S3's
// texts.
func (p *Policy) Check(fields Fields, now time.Time) error {
	if !now.Before(p.Expiration) {
		return refuse(ErrPolicyDenied, "Invalid according to Policy: Policy expired.")
	}
	covered := map[string]bool{}
	for _, c := range p.Conditions {
		covered[c.Field] = true
		if !c.holds(fields[c.Field]) {
			return refuse(ErrPolicyDenied, "Invalid according to Policy: Policy Condition failed: %s", c)
		}
	}
	var extra []string
	for name := range fields {
		if !covered[name] && !Exempt(name) {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return refuse(ErrPolicyDenied, "Invalid according to Policy: Extra input fields: %s", strings.Join(extra, ", "))
	}
	return nil
}

func (c Condition) holds(v string) bool {
	if c.Op == OpEq {
		return v == c.Value
	}
	if c.Field == "content-type" && c.Value != "" {
		// S3: a Content-Type listing several types must have each start with the prefix.
		for t := range strings.SplitSeq(v, ",") {
			if !strings.HasPrefix(strings.TrimSpace(t), c.Value) {
				return false
			}
		}
		return true
	}
	return strings.HasPrefix(v, c.Value)
}
