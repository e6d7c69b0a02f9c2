package cors

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Vary is what S3 sends as Vary with an answer a rule allowed: the answer depends on these.
const Vary = "Origin, Access-Control-Request-Headers, Access-Control-Request-Method"

// Match returns the first rule that allows a request from origin with method (a preflight's
// Access-Control-Request-Method) and every one of headers (a preflight's
// Access-Control-Request-Headers, as RequestHeaders reads them; nil for an actual request,
// whose own headers S3 does not check); nil when none does.
func (c *Config) Match(origin, method string, headers []string) *Rule {
	if c == nil {
		return nil
	}
	for i := range c.Rules {
		if r := &c.Rules[i]; r.allows(origin, method, headers) {
			return r
		}
	}
	return nil
}

func (r *Rule) allows(origin, method string, headers []string) bool {
	if !slices.Contains(r.AllowedMethods, method) {
		return false
	}
	if !slices.ContainsFunc(r.AllowedOrigins, func(p string) bool { return wildcardMatch(p, origin) }) {
		return false
	}
	for _, h := range headers {
		if !slices.ContainsFunc(r.AllowedHeaders, func(p string) bool { return wildcardMatch(strings.ToLower(p), h) }) {
			return false
		}
	}
	return true
}

// anyOrigin reports whether the rule allows every origin, which S3 answers with
// Access-Control-Allow-Origin: * (and then without Access-Control-Allow-Credentials).
func (r *Rule) anyOrigin() bool { return slices.Contains(r.AllowedOrigins, "*") }

// SetHeaders sets the CORS headers of an answer the rule allows, as S3 sends them: the origin
// (or "*"), Access-Control-Allow-Credentials for a named origin, the rule's methods, the
// requested headers (a preflight's, lower-cased; none for an actual request), the rule's
// exposed headers and max age, and Vary.
func (r *Rule) SetHeaders(h http.Header, origin string, requested []string) {
	if r.anyOrigin() {
		h.Set("Access-Control-Allow-Origin", "*")
	} else {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	h.Set("Access-Control-Allow-Methods", strings.Join(r.AllowedMethods, ", "))
	if len(requested) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(requested, ", "))
	}
	if len(r.ExposeHeaders) > 0 {
		h.Set("Access-Control-Expose-Headers", strings.Join(r.ExposeHeaders, ", "))
	}
	if r.MaxAgeSeconds != nil {
		h.Set("Access-Control-Max-Age", strconv.Itoa(*r.MaxAgeSeconds))
	}
	h.Set("Vary", Vary)
}

// RequestHeaders reads Access-Control-Request-Headers (every line of it): the header names,
// lower-cased, each once, in the order asked.
func RequestHeaders(values []string) []string {
	var out []string
	for _, v := range values {
		for _, name := range strings.Split(v, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "" && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// wildcardMatch reports whether s matches pattern, in which "*" stands for any run of
// characters (the empty one included); the match is anchored at both ends. A validated
// pattern has one "*" at most; more are matched all the same, without backtracking blow-up.
func wildcardMatch(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
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
