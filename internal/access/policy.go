package access

import (
	"encoding/json"
	"fmt"
	"strings"
)

// MaxPolicySize is S3's limit on a bucket policy document: 20 KiB.
const MaxPolicySize = 20 << 10

// Effect is a policy statement's effect.
type Effect string

// The two effects.
const (
	EffectAllow Effect = "Allow"
	EffectDeny  Effect = "Deny"
)

// Policy is a parsed bucket policy. What it supports of S3's policy language: Version
// (2012-10-17 or 2008-10-17), Id, and Statement (one or a list) with Sid, Effect, Principal
// ("*", or {"AWS": ...} / {"CanonicalUser": ...} naming accounts and users), Action and Resource
// (a string or a list, with * and ? wildcards), and Condition (condition.go: IAM's operators
// on the keys Cairn supplies; an unknown operator or key is refused). NotPrincipal, NotAction
// and NotResource are refused (ErrMalformedPolicy wrapping ErrUnsupported), never ignored: a
// policy that means more than Cairn enforces must not be accepted.
type Policy struct {
	// Raw is the document as the client sent it, for GetBucketPolicy.
	Raw        string
	Version    string
	ID         string
	Statements []Statement
}

// Statement is one statement of a policy.
type Statement struct {
	Sid        string
	Effect     Effect
	Principals []Principal
	// Actions are lower-cased patterns ("s3:get*", "*"); actions compare without case.
	Actions []string
	// Resources are ARN patterns; resources compare with case.
	Resources []string
	// Conditions must all hold for the statement to apply (none: it always applies).
	Conditions []Clause
}

// Principal is whom a statement is about: everyone (Any, anonymous callers included), every
// user of an account, or one user.
type Principal struct {
	Any     bool
	Account string
	User    string // empty: every user of Account
}

func (p Principal) matches(id Identity) bool {
	switch {
	case p.Any:
		return true
	case id.Anonymous || id.Account == "":
		return false
	case p.User == "":
		// An account-wide principal is the account itself, which its administrators act
		// for; its other users need a principal naming them (AWS: an IAM user needs its
		// own permission, and Cairn has no IAM policies).
		return id.Account == p.Account && id.Admin
	}
	return id.Account == p.Account && id.User == p.User
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformedPolicy, fmt.Sprintf(format, args...))
}

// ParsePolicy parses and validates a bucket policy for bucket: well-formed JSON of the
// supported shape, known effects, principals Cairn can name, s3 actions, and resources that
// are this bucket or objects in it. Every error wraps ErrMalformedPolicy.
func ParsePolicy(doc []byte, bucket string) (*Policy, error) {
	if len(doc) > MaxPolicySize {
		return nil, malformed("the policy is %d bytes, more than the %d allowed", len(doc), MaxPolicySize)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, malformed("the policy is not a JSON object: %v", err)
	}
	p := &Policy{Raw: string(doc)}
	for k, v := range top {
		var err error
		switch k {
		case "Version":
			err = json.Unmarshal(v, &p.Version)
			if err == nil && p.Version != "2012-10-17" && p.Version != "2008-10-17" {
				return nil, malformed("unknown policy version %.40q", p.Version)
			}
		case "Id":
			err = json.Unmarshal(v, &p.ID)
		case "Statement":
			p.Statements, err = parseStatements(v, bucket)
			if err != nil {
				return nil, err
			}
		default:
			return nil, malformed("unknown field %.40q in the policy", k)
		}
		if err != nil {
			return nil, malformed("field %s: %v", k, err)
		}
	}
	if len(p.Statements) == 0 {
		return nil, malformed("the policy has no statement")
	}
	sids := map[string]bool{}
	for _, s := range p.Statements {
		if s.Sid == "" {
			continue
		}
		if sids[s.Sid] {
			return nil, malformed("statement IDs (Sid) must be unique: %.40q appears twice", s.Sid)
		}
		sids[s.Sid] = true
	}
	return p, nil
}

func parseStatements(raw json.RawMessage, bucket string) ([]Statement, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		list = []json.RawMessage{raw} // a single statement need not be in a list
	}
	out := make([]Statement, 0, len(list))
	for i, r := range list {
		s, err := parseStatement(r, bucket)
		if err != nil {
			return nil, fmt.Errorf("statement %d: %w", i+1, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func parseStatement(raw json.RawMessage, bucket string) (Statement, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return Statement{}, malformed("a statement must be a JSON object")
	}
	var s Statement
	var havePrincipal bool
	for k, v := range fields {
		var err error
		switch k {
		case "Sid":
			err = json.Unmarshal(v, &s.Sid)
		case "Effect":
			var e string
			if err = json.Unmarshal(v, &e); err == nil {
				s.Effect = Effect(e)
				if s.Effect != EffectAllow && s.Effect != EffectDeny {
					return Statement{}, malformed("invalid effect %.40q (Allow or Deny)", e)
				}
			}
		case "Principal":
			havePrincipal = true
			s.Principals, err = parsePrincipal(v)
			if err != nil {
				return Statement{}, err
			}
		case "Action":
			s.Actions, err = parseActions(v)
			if err != nil {
				return Statement{}, err
			}
		case "Resource":
			s.Resources, err = parseResources(v, bucket)
			if err != nil {
				return Statement{}, err
			}
		case "Condition":
			s.Conditions, err = parseCondition(v)
			if err != nil {
				return Statement{}, err
			}
		case "NotPrincipal", "NotAction", "NotResource":
			return Statement{}, fmt.Errorf("%w: %w: %s is not supported by this server", ErrMalformedPolicy, ErrUnsupported, k)
		default:
			return Statement{}, malformed("unknown field %.40q in a statement", k)
		}
		if err != nil {
			return Statement{}, malformed("field %s: %v", k, err)
		}
	}
	switch {
	case s.Effect == "":
		return Statement{}, malformed("missing Effect")
	case !havePrincipal:
		return Statement{}, malformed("missing Principal")
	case len(s.Actions) == 0:
		return Statement{}, malformed("missing Action")
	case len(s.Resources) == 0:
		return Statement{}, malformed("missing Resource")
	}
	if err := checkApplies(s, bucket); err != nil {
		return Statement{}, err
	}
	return s, nil
}

// stringOrList reads a JSON string or a non-empty list of strings.
func stringOrList(raw json.RawMessage) ([]string, error) {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("want a string or a list of strings")
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("an empty list")
	}
	return list, nil
}

func parsePrincipal(raw json.RawMessage) ([]Principal, error) {
	var star string
	if err := json.Unmarshal(raw, &star); err == nil {
		if star != "*" {
			return nil, malformed("invalid principal %.80q: a principal is \"*\" or {\"AWS\": ...}", star)
		}
		return []Principal{{Any: true}}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) == 0 {
		return nil, malformed("invalid principal: want \"*\" or {\"AWS\": [...]}")
	}
	var out []Principal
	for k, v := range m {
		if k != "AWS" && k != "CanonicalUser" {
			return nil, malformed("invalid principal type %.40q (AWS or CanonicalUser)", k)
		}
		ids, err := stringOrList(v)
		if err != nil {
			return nil, malformed("principal %s: %v", k, err)
		}
		for _, id := range ids {
			p, err := parsePrincipalID(id)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// parsePrincipalID reads one principal: "*", "ACCOUNT", "ACCOUNT:USER",
// "arn:aws:iam::ACCOUNT:root" or "arn:aws:iam::ACCOUNT:user/USER".
func parsePrincipalID(s string) (Principal, error) {
	if s == "*" {
		return Principal{Any: true}, nil
	}
	bad := func() (Principal, error) {
		return Principal{}, malformed("invalid principal %.80q: want ACCOUNT, ACCOUNT:USER, arn:aws:iam::ACCOUNT:root or arn:aws:iam::ACCOUNT:user/USER", s)
	}
	var account, user string
	if rest, ok := strings.CutPrefix(s, "arn:aws:iam::"); ok {
		a, what, ok := strings.Cut(rest, ":")
		if !ok {
			return bad()
		}
		account = a
		switch {
		case what == "root":
		case strings.HasPrefix(what, "user/"):
			user = strings.TrimPrefix(what, "user/")
			if user == "" {
				return bad()
			}
		default:
			return bad()
		}
	} else {
		var hasUser bool
		account, user, hasUser = splitUser(s)
		if hasUser && user == "" {
			return bad()
		}
	}
	if !validAccountName(account) || (user != "" && !validAccountName(user)) {
		return bad()
	}
	return Principal{Account: account, User: user}, nil
}

func parseActions(raw json.RawMessage) ([]string, error) {
	list, err := stringOrList(raw)
	if err != nil {
		return nil, malformed("Action: %v", err)
	}
	out := make([]string, 0, len(list))
	for _, a := range list {
		if a == "*" {
			out = append(out, a)
			continue
		}
		name, ok := strings.CutPrefix(strings.ToLower(a), "s3:")
		if !ok || name == "" {
			return nil, malformed("invalid action %.80q: only s3: actions apply to a bucket", a)
		}
		for i := 0; i < len(name); i++ {
			c := name[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '*' || c == '?') {
				return nil, malformed("invalid action %.80q", a)
			}
		}
		out = append(out, "s3:"+name)
	}
	return out, nil
}

func parseResources(raw json.RawMessage, bucket string) ([]string, error) {
	list, err := stringOrList(raw)
	if err != nil {
		return nil, malformed("Resource: %v", err)
	}
	for _, r := range list {
		rest, ok := strings.CutPrefix(r, arnPrefix)
		if !ok || rest == "" {
			return nil, malformed("invalid resource %.120q: want arn:aws:s3:::%s or arn:aws:s3:::%s/...", r, bucket, bucket)
		}
		bucketPart, _, _ := strings.Cut(rest, "/")
		if !wildMatch(bucketPart, bucket) && !wildMatch(bucketPart, bucket+"/") {
			return nil, malformed("the resource %.120q is not bucket %s or its objects: a bucket policy applies to its own bucket only", r, bucket)
		}
	}
	return list, nil
}

// checkApplies refuses a statement none of whose known actions applies to any of its resources
// (s3:GetObject with only arn:aws:s3:::bucket, s3:ListBucket with only .../bucket/*), as S3
// does: such a statement does nothing, and was certainly meant to do something. Actions Cairn
// does not know are left alone.
func checkApplies(s Statement, bucket string) error {
	bucketARN := arnPrefix + bucket
	toBucket, toObjects := false, false
	for _, r := range s.Resources {
		toBucket = toBucket || wildMatch(r, bucketARN)
		toObjects = toObjects || strings.Contains(strings.TrimPrefix(r, arnPrefix), "/") || wildMatch(r, bucketARN+"/x")
	}
	for _, pat := range s.Actions {
		known := false
		for a := Action(1); a < numActions; a++ {
			if a.accountLevel() || !wildMatch(pat, strings.ToLower(a.String())) {
				continue
			}
			known = true
			if a.ObjectLevel() && toObjects || !a.ObjectLevel() && toBucket {
				return nil
			}
		}
		if !known {
			return nil
		}
	}
	return malformed("Action does not apply to any resource(s) in statement")
}

// match returns the first statement of the given effect that covers the request and whose
// conditions hold in ctx, or nil. outsider (RestrictPublicBuckets on a bucket with a public
// policy, and a caller outside the owner's account) leaves out the public statements.
func (p *Policy) match(e Effect, id Identity, a Action, arn string, ctx Context, outsider bool) *Statement {
	name := strings.ToLower(a.String())
	for i := range p.Statements {
		s := &p.Statements[i]
		if s.Effect != e || !s.coversPrincipal(id) || !s.coversAction(name) || !s.coversResource(arn) {
			continue
		}
		if outsider && s.public() {
			continue
		}
		if !conditionsHold(s.Conditions, ctx) {
			continue
		}
		return s
	}
	return nil
}

func (s *Statement) coversPrincipal(id Identity) bool {
	for _, p := range s.Principals {
		if p.matches(id) {
			return true
		}
	}
	return false
}

func (s *Statement) coversAction(lowerName string) bool {
	for _, pat := range s.Actions {
		if wildMatch(pat, lowerName) {
			return true
		}
	}
	return false
}

func (s *Statement) coversResource(arn string) bool {
	for _, pat := range s.Resources {
		if wildMatch(pat, arn) {
			return true
		}
	}
	return false
}

// Public reports whether the policy allows anything to everyone (S3's "policy status"):
// a statement with Effect Allow and Principal "*" and no condition that restricts it to
// fixed callers (Clause.restricting).
func (p *Policy) Public() bool {
	if p == nil {
		return false
	}
	for i := range p.Statements {
		if p.Statements[i].public() {
			return true
		}
	}
	return false
}

func (s *Statement) public() bool {
	if s.Effect != EffectAllow {
		return false
	}
	any := false
	for _, pr := range s.Principals {
		any = any || pr.Any
	}
	if !any {
		return false
	}
	for i := range s.Conditions {
		if s.Conditions[i].restricting() {
			return false
		}
	}
	return true
}

// wildMatch matches s against a pattern where * is any run of bytes (slashes included) and ?
// is one byte, as IAM does. It runs in O(len(pattern)·len(s)) at worst.
func wildMatch(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
