package access

import (
	"fmt"
	"net/url"
	"strings"
)

// SwiftACL is a Swift container ACL, the value of X-Container-Read or X-Container-Write, as
// tempauth understands it: a comma-separated list of
//
//	.r:*             any referrer (any request, with or without a Referer)
//	.r:example.com   requests whose Referer's host is example.com
//	.r:.example.com  ... is example.com's subdomain (any host ending in .example.com)
//	.r:-example.com  not that host (entries apply in order; the last that matches decides)
//	.rlistings       referrers allowed to read may list the container too
//	account          every user of the account
//	account:user     one user
//
// (.ref:, .referer: and .referrer: are accepted for .r:, and *.example.com for .example.com,
// as in Swift.) Referrer entries and .rlistings belong to read ACLs only.
type SwiftACL struct {
	// Referrers are the .r: entries in order, cleaned: "*", "host", ".domain", each possibly
	// prefixed by "-".
	Referrers []string
	// Listings is .rlistings.
	Listings bool
	// Principals are the account and account:user entries.
	Principals []string
}

// maxSwiftACLLength bounds an ACL header value (Swift's header values are at most 8 KiB).
const maxSwiftACLLength = 8192

// ParseSwiftACL parses a read ACL (X-Container-Read). An empty value is the empty ACL. Errors
// wrap ErrInvalidSwiftACL; the message is fit for Swift's 400 answer.
func ParseSwiftACL(s string) (SwiftACL, error) {
	return parseSwiftACL(s, false)
}

// ParseSwiftWriteACL parses a write ACL (X-Container-Write): accounts and users only.
func ParseSwiftWriteACL(s string) (SwiftACL, error) {
	return parseSwiftACL(s, true)
}

func parseSwiftACL(s string, write bool) (SwiftACL, error) {
	var acl SwiftACL
	if len(s) > maxSwiftACLLength {
		return acl, fmt.Errorf("%w: the ACL is longer than %d bytes", ErrInvalidSwiftACL, maxSwiftACLLength)
	}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if item == ".rlistings" {
			if write {
				return SwiftACL{}, fmt.Errorf("%w: .rlistings is not allowed in a write ACL", ErrInvalidSwiftACL)
			}
			acl.Listings = true
			continue
		}
		if strings.HasPrefix(item, ".") {
			first, second, ok := strings.Cut(item, ":")
			first, second = strings.TrimSpace(first), strings.TrimSpace(second)
			switch {
			case !ok || (first != ".r" && first != ".ref" && first != ".referer" && first != ".referrer"):
				return SwiftACL{}, fmt.Errorf("%w: unknown designator %.40q in ACL %.80q", ErrInvalidSwiftACL, first, item)
			case write:
				return SwiftACL{}, fmt.Errorf("%w: referrers are not allowed in a write ACL: %.80q", ErrInvalidSwiftACL, item)
			}
			ref, err := cleanReferrer(second)
			if err != nil {
				return SwiftACL{}, fmt.Errorf("%w: %s: %.80q", ErrInvalidSwiftACL, err, item)
			}
			acl.Referrers = append(acl.Referrers, ref)
			continue
		}
		account, user, hasUser := splitUser(item)
		if !validAccountName(account) || (hasUser && !validAccountName(user)) {
			return SwiftACL{}, fmt.Errorf("%w: %.80q is not an account or account:user", ErrInvalidSwiftACL, item)
		}
		acl.Principals = append(acl.Principals, item)
	}
	return acl, nil
}

// cleanReferrer cleans the host part of a .r: entry as Swift's clean_acl does.
func cleanReferrer(v string) (string, error) {
	neg := ""
	if strings.HasPrefix(v, "-") {
		neg, v = "-", strings.TrimSpace(v[1:])
	}
	if v != "*" && strings.HasPrefix(v, "*") {
		v = strings.TrimSpace(v[1:]) // *.example.com means .example.com
	}
	if v == "" || v == "." || strings.HasPrefix(v, "-") {
		return "", fmt.Errorf("no host or domain after the referrer designation")
	}
	if neg != "" && v == "*" {
		return "", fmt.Errorf("a referrer cannot be -*")
	}
	if v == "*" {
		return neg + v, nil
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c == 0x7f || c == ',' || c == '/' || c == '*' {
			return "", fmt.Errorf("a referrer is *, a host or a .domain")
		}
	}
	return neg + v, nil
}

// String is the ACL in Swift's cleaned form, as it is stored and answered.
func (a SwiftACL) String() string {
	var parts []string
	for _, r := range a.Referrers {
		parts = append(parts, ".r:"+r)
	}
	if a.Listings {
		parts = append(parts, ".rlistings")
	}
	parts = append(parts, a.Principals...)
	return strings.Join(parts, ",")
}

// Empty reports whether the ACL grants nothing.
func (a SwiftACL) Empty() bool {
	return len(a.Referrers) == 0 && !a.Listings && len(a.Principals) == 0
}

// ReferrerAllowed reports whether the .r: entries allow a request with this Referer header, as
// Swift's referrer_allowed: the host of the Referer ("unknown" if there is none) is compared
// with each entry in order, and the last entry that matches decides.
func (a SwiftACL) ReferrerAllowed(referer string) bool {
	if len(a.Referrers) == 0 {
		return false
	}
	host := "unknown"
	if referer != "" {
		if u, err := url.Parse(referer); err == nil && u.Hostname() != "" {
			host = u.Hostname()
		}
	}
	allowed := false
	for _, m := range a.Referrers {
		if neg, ok := strings.CutPrefix(m, "-"); ok {
			if hostMatches(neg, host) {
				allowed = false
			}
		} else if m == "*" || hostMatches(m, host) {
			allowed = true
		}
	}
	return allowed
}

func hostMatches(m, host string) bool {
	return m == host || (strings.HasPrefix(m, ".") && strings.HasSuffix(host, m))
}

// grantsIdentity reports whether an account or account:user entry covers the identity.
func (a SwiftACL) grantsIdentity(id Identity) bool {
	if id.Anonymous || id.Account == "" {
		return false
	}
	for _, p := range a.Principals {
		account, user, hasUser := splitUser(p)
		if account == id.Account && (!hasUser || user == id.User) {
			return true
		}
	}
	return false
}

// SharesOutside reports whether the ACL lets in anyone outside the owner account: a referrer
// entry (anyone, anonymously) or an entry naming another account or its users.
func (a SwiftACL) SharesOutside(owner string) bool {
	if len(a.Referrers) > 0 {
		return true
	}
	for _, p := range a.Principals {
		if account, _, _ := splitUser(p); account != owner {
			return true
		}
	}
	return false
}
