package access

import (
	"encoding/json"
	"math"
	"net"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Policy conditions: the Condition block of a statement, evaluated as IAM does against the
// request's context (Context), which the front end collects; this file does no I/O.
//
// IAM's rules, as written in "IAM JSON policy elements: Condition operators" and followed here:
//
//   - A statement applies only if every operator of its block holds; an operator holds if
//     every key under it holds (AND); a key holds if any of its values matches (OR).
//   - A key absent from the request context: the condition is false, except for the negated
//     operators (StringNotEquals, StringNotEqualsIgnoreCase, StringNotLike, NumericNotEquals,
//     DateNotEquals, NotIpAddress), for which it is true. ...IfExists: true when the key is
//     absent, otherwise the operator as without the suffix. Null: "true" holds when the key is
//     absent, "false" when it is present.
//   - Set operators for keys with several values: ForAnyValue:Op holds if at least one value of
//     the request matches (false when the key is absent or empty); ForAllValues:Op holds if
//     every value of the request matches (true when the key is absent or empty). For a negated
//     Op, a request value "matches" when it equals none of the policy's values.
//   - Key names compare without case; the tag key after s3:ExistingObjectTag/ and
//     s3:RequestObjectTag/ keeps its case, as tag keys do.

// Context is what a request offers to conditions: condition key → values. Build it with Set,
// which puts keys in the form evaluation looks them up in. A key not set is absent.
type Context map[string][]string

// Set sets a key's values.
func (c Context) Set(key string, values ...string) { c[normKey(key)] = values }

// Get is a key's values and whether it is present.
func (c Context) Get(key string) ([]string, bool) {
	v, ok := c[normKey(key)]
	return v, ok
}

// Condition keys whose values the front ends supply.
const (
	KeySourceIP              = "aws:SourceIp"
	KeySecureTransport       = "aws:SecureTransport"
	KeyCurrentTime           = "aws:CurrentTime"
	KeyEpochTime             = "aws:EpochTime"
	KeyUserAgent             = "aws:UserAgent"
	KeyReferer               = "aws:Referer"
	KeyUsername              = "aws:username"
	KeyUserID                = "aws:userid"
	KeyPrincipalAccount      = "aws:PrincipalAccount"
	KeyPrefix                = "s3:prefix"
	KeyDelimiter             = "s3:delimiter"
	KeyMaxKeys               = "s3:max-keys"
	KeyACL                   = "s3:x-amz-acl"
	KeySSE                   = "s3:x-amz-server-side-encryption"
	KeySSEKMSKeyID           = "s3:x-amz-server-side-encryption-aws-kms-key-id"
	KeySSECAlgorithm         = "s3:x-amz-server-side-encryption-customer-algorithm"
	KeyStorageClass          = "s3:x-amz-storage-class"
	KeyContentSHA256         = "s3:x-amz-content-sha256"
	KeyGrantRead             = "s3:x-amz-grant-read"
	KeyGrantWrite            = "s3:x-amz-grant-write"
	KeyGrantReadACP          = "s3:x-amz-grant-read-acp"
	KeyGrantWriteACP         = "s3:x-amz-grant-write-acp"
	KeyGrantFullControl      = "s3:x-amz-grant-full-control"
	KeyRequestObjectTagKeys  = "s3:RequestObjectTagKeys"
	KeyVersionID             = "s3:VersionId"
	KeyCopySource            = "s3:x-amz-copy-source"
	KeyMetadataDirective     = "s3:x-amz-metadata-directive"
	KeyObjectLockMode        = "s3:object-lock-mode"
	KeyObjectLockRetainUntil = "s3:object-lock-retain-until-date"
	KeyObjectLockLegalHold   = "s3:object-lock-legal-hold"
	// KeyExistingObjectTag and KeyRequestObjectTag are prefixes: add the tag key.
	KeyExistingObjectTag = "s3:ExistingObjectTag/"
	KeyRequestObjectTag  = "s3:RequestObjectTag/"
)

var knownKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range []string{KeySourceIP, KeySecureTransport, KeyCurrentTime, KeyEpochTime, KeyUserAgent, KeyReferer,
		KeyUsername, KeyUserID, KeyPrincipalAccount, KeyPrefix, KeyDelimiter, KeyMaxKeys, KeyACL, KeySSE,
		KeySSEKMSKeyID, KeySSECAlgorithm, KeyStorageClass, KeyContentSHA256,
		KeyGrantRead, KeyGrantWrite, KeyGrantReadACP, KeyGrantWriteACP, KeyGrantFullControl,
		KeyRequestObjectTagKeys, KeyVersionID, KeyCopySource, KeyMetadataDirective, KeyObjectLockMode,
		KeyObjectLockRetainUntil, KeyObjectLockLegalHold} {
		m[strings.ToLower(k)] = true
	}
	return m
}()

var tagKeyPrefixes = []string{strings.ToLower(KeyExistingObjectTag), strings.ToLower(KeyRequestObjectTag)}

// normKey lower-cases a key's name, but not the tag key of a tag condition key.
func normKey(k string) string {
	lk := strings.ToLower(k)
	for _, p := range tagKeyPrefixes {
		if strings.HasPrefix(lk, p) {
			return p + k[len(p):]
		}
	}
	return lk
}

func validKey(k string) bool {
	lk := strings.ToLower(k)
	for _, p := range tagKeyPrefixes {
		if strings.HasPrefix(lk, p) {
			return len(k) > len(p)
		}
	}
	return knownKeys[lk]
}

// opKind is the family of a condition operator.
type opKind uint8

const (
	opString opKind = iota + 1
	opStringIgnoreCase
	opStringLike
	opNumeric
	opDate
	opBool
	opIP
	opNull
)

// cmp is how a numeric or date operator compares request to policy value.
type cmp uint8

const (
	cmpEq cmp = iota
	cmpLt
	cmpLe
	cmpGt
	cmpGe
)

type opSpec struct {
	kind    opKind
	negated bool
	cmp     cmp
}

var operators = map[string]opSpec{
	"stringequals":              {kind: opString},
	"stringnotequals":           {kind: opString, negated: true},
	"stringequalsignorecase":    {kind: opStringIgnoreCase},
	"stringnotequalsignorecase": {kind: opStringIgnoreCase, negated: true},
	"stringlike":                {kind: opStringLike},
	"stringnotlike":             {kind: opStringLike, negated: true},
	"numericequals":             {kind: opNumeric},
	"numericnotequals":          {kind: opNumeric, negated: true},
	"numericlessthan":           {kind: opNumeric, cmp: cmpLt},
	"numericlessthanequals":     {kind: opNumeric, cmp: cmpLe},
	"numericgreaterthan":        {kind: opNumeric, cmp: cmpGt},
	"numericgreaterthanequals":  {kind: opNumeric, cmp: cmpGe},
	"dateequals":                {kind: opDate},
	"datenotequals":             {kind: opDate, negated: true},
	"datelessthan":              {kind: opDate, cmp: cmpLt},
	"datelessthanequals":        {kind: opDate, cmp: cmpLe},
	"dategreaterthan":           {kind: opDate, cmp: cmpGt},
	"dategreaterthanequals":     {kind: opDate, cmp: cmpGe},
	"bool":                      {kind: opBool},
	"ipaddress":                 {kind: opIP},
	"notipaddress":              {kind: opIP, negated: true},
	"null":                      {kind: opNull},
}

type setOp uint8

const (
	setNone setOp = iota
	setAny
	setAll
)

// Clause is one key under one operator of a Condition block.
type Clause struct {
	Operator string // as written, for messages
	spec     opSpec
	ifExists bool
	set      setOp
	Key      string // normalised (normKey)
	Values   []string
	nums     []float64
	dates    []time.Time
	prefixes []netip.Prefix
}

// parseCondition reads a statement's Condition block. Every error wraps ErrMalformedPolicy,
// with S3's messages for an unknown operator or key.
func parseCondition(raw json.RawMessage) ([]Clause, error) {
	var ops map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &ops); err != nil {
		return nil, malformed("Condition must be an object of operators, each an object of keys")
	}
	var out []Clause
	for opName, keys := range ops {
		c := Clause{Operator: opName}
		name := strings.ToLower(opName)
		if rest, ok := strings.CutPrefix(name, "foranyvalue:"); ok {
			c.set, name = setAny, rest
		} else if rest, ok := strings.CutPrefix(name, "forallvalues:"); ok {
			c.set, name = setAll, rest
		}
		if rest, ok := strings.CutSuffix(name, "ifexists"); ok && rest != "null" {
			c.ifExists, name = true, rest
		}
		spec, ok := operators[name]
		if !ok || (c.set != setNone && spec.kind == opNull) {
			return nil, malformed("Invalid Condition type : %.60s", opName)
		}
		c.spec = spec
		if len(keys) == 0 {
			return nil, malformed("Condition operator %.60s has no key", opName)
		}
		for key, v := range keys {
			if !validKey(key) {
				return nil, malformed("Policy has an invalid condition key: %.80s", key)
			}
			vals, err := conditionValues(v)
			if err != nil {
				return nil, malformed("Condition %.60s %.80s: %v", opName, key, err)
			}
			cl := c
			cl.Key, cl.Values = normKey(key), vals
			if err := cl.compile(); err != nil {
				return nil, malformed("Condition %.60s %.80s: %v", opName, key, err)
			}
			out = append(out, cl)
		}
	}
	// Map order is random: keep evaluation (and messages) deterministic.
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Operator != out[j].Operator {
			return out[i].Operator < out[j].Operator
		}
		return out[i].Key < out[j].Key
	})
	return out, nil
}

// conditionValues reads a value or list of values; IAM takes numbers and booleans as their text.
func conditionValues(raw json.RawMessage) ([]string, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		list = []json.RawMessage{raw}
	}
	if len(list) == 0 {
		return nil, errText("an empty list of values")
	}
	out := make([]string, 0, len(list))
	for _, r := range list {
		var s string
		if err := json.Unmarshal(r, &s); err == nil {
			out = append(out, s)
			continue
		}
		var n json.Number
		if err := json.Unmarshal(r, &n); err == nil {
			out = append(out, n.String())
			continue
		}
		var b bool
		if err := json.Unmarshal(r, &b); err == nil {
			out = append(out, strconv.FormatBool(b))
			continue
		}
		return nil, errText("a value must be a string, a number or a boolean")
	}
	return out, nil
}

type errText string

func (e errText) Error() string { return string(e) }

// compile parses the policy's values for the operator, so that a policy that cannot match
// as written is refused when it is put rather than silently never matching.
func (c *Clause) compile() error {
	for _, v := range c.Values {
		switch c.spec.kind {
		case opNumeric:
			n, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(n) {
				return errText("invalid number " + strconv.Quote(v))
			}
			c.nums = append(c.nums, n)
		case opDate:
			t, ok := parseDate(v)
			if !ok {
				return errText("invalid date " + strconv.Quote(v) + " (ISO 8601 or epoch seconds)")
			}
			c.dates = append(c.dates, t)
		case opBool, opNull:
			if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
				return errText("invalid boolean " + strconv.Quote(v))
			}
		case opIP:
			p, ok := parseIPRange(v)
			if !ok {
				return errText("invalid IP address or CIDR range " + strconv.Quote(v))
			}
			c.prefixes = append(c.prefixes, p)
		}
	}
	return nil
}

func parseIPRange(s string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

// parseDate reads IAM's date forms: ISO 8601 (with or without time and zone) or epoch seconds.
func parseDate(s string) (time.Time, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0).UTC(), true
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05", "2006-01-02T15:04Z07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// holds evaluates the clause against the request's context.
func (c *Clause) holds(ctx Context) bool {
	vals, present := ctx[c.Key]
	if c.spec.kind == opNull {
		want := strings.EqualFold(c.Values[0], "true")
		if len(c.Values) > 1 { // ["true","false"]: OR of the values
			return true
		}
		absent := !present || len(vals) == 0
		return absent == want
	}
	if !present || len(vals) == 0 {
		switch {
		case c.ifExists:
			return true
		case c.set == setAll:
			return true
		case c.set == setAny:
			return false
		}
		return c.spec.negated
	}
	switch c.set {
	case setAny:
		for _, v := range vals {
			if c.matchOne(v) {
				return true
			}
		}
		return false
	case setAll:
		for _, v := range vals {
			if !c.matchOne(v) {
				return false
			}
		}
		return true
	}
	// Without a set operator, a key with several values (s3:RequestObjectTagKeys) holds for a
	// positive operator if any value matches, and for a negated one if none matches the
	// positive operator: the negated operator is the negation of the positive one, as IAM
	// describes it.
	for _, v := range vals {
		if c.matchesAny(v) {
			return !c.spec.negated
		}
	}
	return c.spec.negated
}

// matchOne reports whether one request value satisfies the operator: for a positive operator,
// it matches one of the policy's values; for a negated one, it matches none.
func (c *Clause) matchOne(v string) bool {
	m := c.matchesAny(v)
	if c.spec.negated {
		return !m
	}
	return m
}

func (c *Clause) matchesAny(v string) bool {
	switch c.spec.kind {
	case opString:
		for _, p := range c.Values {
			if p == v {
				return true
			}
		}
	case opStringIgnoreCase:
		for _, p := range c.Values {
			if strings.EqualFold(p, v) {
				return true
			}
		}
	case opStringLike:
		for _, p := range c.Values {
			if wildMatch(p, v) {
				return true
			}
		}
	case opBool:
		for _, p := range c.Values {
			if strings.EqualFold(p, v) {
				return true
			}
		}
	case opNumeric:
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return false
		}
		for _, p := range c.nums {
			if compare(c.spec.cmp, cmpFloat(n, p)) {
				return true
			}
		}
	case opDate:
		t, ok := parseDate(v)
		if !ok {
			return false
		}
		for _, p := range c.dates {
			if compare(c.spec.cmp, t.Compare(p)) {
				return true
			}
		}
	case opIP:
		a, err := netip.ParseAddr(v)
		if err != nil {
			return false
		}
		a = a.Unmap()
		for _, p := range c.prefixes {
			if p.Contains(a) {
				return true
			}
		}
	}
	return false
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compare(c cmp, r int) bool {
	switch c {
	case cmpLt:
		return r < 0
	case cmpLe:
		return r <= 0
	case cmpGt:
		return r > 0
	case cmpGe:
		return r >= 0
	}
	return r == 0
}

// conditionsHold reports whether every clause holds.
func conditionsHold(cs []Clause, ctx Context) bool {
	for i := range cs {
		if !cs[i].holds(ctx) {
			return false
		}
	}
	return true
}

// UsesExistingObjectTags reports whether some statement tests s3:ExistingObjectTag/..., so
// that the front end knows to read an object's tags into the context.
func (p *Policy) UsesExistingObjectTags() bool { return p.usesKey(KeyExistingObjectTag) }

// UsesRequestObjectTags reports whether some statement tests s3:RequestObjectTag/... or
// s3:RequestObjectTagKeys, so that a front end that learns the request's tags only from its
// body (PutObjectTagging) knows to decide once it has read them.
func (p *Policy) UsesRequestObjectTags() bool {
	return p.usesKey(KeyRequestObjectTag) || p.usesKey(KeyRequestObjectTagKeys)
}

// usesKey reports whether a condition key of some statement starts with prefix (without case).
func (p *Policy) usesKey(prefix string) bool {
	if p == nil {
		return false
	}
	pre := strings.ToLower(prefix)
	for _, s := range p.Statements {
		for _, c := range s.Conditions {
			if strings.HasPrefix(strings.ToLower(c.Key), pre) {
				return true
			}
		}
	}
	return false
}

// restricting reports whether a clause ties a statement to fixed, non-public callers, so that
// an Allow to Principal "*" under it is not public. Cairn's rule (a simplification of AWS's,
// written down in docs/api.md): aws:SourceIp under IpAddress with every range no wider than
// /8 (IPv4) or /32 (IPv6), or aws:PrincipalAccount, aws:userid or aws:username under
// StringEquals/StringEqualsIgnoreCase with values free of wildcards.
func (c *Clause) restricting() bool {
	if c.ifExists || c.set != setNone || c.spec.negated {
		return false
	}
	switch c.Key {
	case strings.ToLower(KeySourceIP):
		if c.spec.kind != opIP {
			return false
		}
		for _, p := range c.prefixes {
			if p.Addr().Is4() && p.Bits() < 8 || !p.Addr().Is4() && p.Bits() < 32 {
				return false
			}
		}
		return true
	case strings.ToLower(KeyPrincipalAccount), strings.ToLower(KeyUserID), strings.ToLower(KeyUsername):
		if c.spec.kind != opString && c.spec.kind != opStringIgnoreCase {
			return false
		}
		for _, v := range c.Values {
			if strings.ContainsAny(v, "*?") {
				return false
			}
		}
		return true
	}
	return false
}

// BaseContext is the context every request offers, whichever API it comes through: the
// caller's address (peer is the TCP peer, host:port; Cairn trusts no forwarding header, which
// a client could forge), whether it came over TLS, the time, its User-Agent and Referer, and
// who it is.
func BaseContext(peer string, secure bool, now time.Time, userAgent, referer string, id Identity) Context {
	c := Context{}
	if host, _, err := net.SplitHostPort(peer); err == nil && host != "" {
		c.Set(KeySourceIP, host)
	}
	c.Set(KeySecureTransport, strconv.FormatBool(secure))
	now = now.UTC()
	c.Set(KeyCurrentTime, now.Format(time.RFC3339))
	c.Set(KeyEpochTime, strconv.FormatInt(now.Unix(), 10))
	if userAgent != "" {
		c.Set(KeyUserAgent, userAgent)
	}
	if referer != "" {
		c.Set(KeyReferer, referer)
	}
	if !id.Anonymous && id.Account != "" {
		c.Set(KeyPrincipalAccount, id.Account)
		if id.User != "" {
			c.Set(KeyUsername, id.User)
			c.Set(KeyUserID, id.Account+":"+id.User)
		}
	}
	return c
}

// ObjectMetaTagging is the key of an object's SysMeta holding its tags, in the query form
// the S3 front end stores (internal/s3/tagging.ObjectSysMetaKey, which a test holds equal).
const ObjectMetaTagging = "tagging"

// WithExistingTags is a copy of c with s3:ExistingObjectTag/<key> for each tag of an object
// whose SysMeta is sys. Tags that do not decode add nothing.
func (c Context) WithExistingTags(sys map[string]string) Context {
	q, err := url.ParseQuery(sys[ObjectMetaTagging])
	if err != nil || len(q) == 0 {
		return c
	}
	out := make(Context, len(c)+len(q))
	for k, v := range c {
		out[k] = v
	}
	for k, v := range q {
		if len(v) > 0 {
			out.Set(KeyExistingObjectTag+k, v[0])
		}
	}
	return out
}
