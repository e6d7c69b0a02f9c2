package swiftwire

import (
	"net"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
)

// ResellerPrefix is the prefix of Swift account names in URLs (tempauth's AUTH_), the same as
// in the cluster (meta.SwiftAccount).
const ResellerPrefix = meta.ResellerPrefix

// RemapDomain applies Swift's domain_remap to a request's Host and path: a host
// <account>.<domain> or <container>.<account>.<domain>, for one of the storage domains, names
// the account (and container) that the path is in, so "/<path>" becomes
// /v1/<account>[/<container>]/<path>. Hosts cannot hold '_', so an account label may write
// "AUTH-name" for "AUTH_name"; a label without the reseller prefix is not remapped. remapped is
// false for a host outside the storage domains; err (400) for one with more labels than that.
func RemapDomain(host, path string, domains []string) (newPath string, remapped bool, err error) {
	if h, _, splitErr := net.SplitHostPort(host); splitErr == nil {
		host = h
	}
	var labels string // DNS names are case-insensitive; the account name in them is not
	for _, d := range domains {
		d = "." + strings.TrimPrefix(strings.ToLower(d), ".")
		if n := len(host) - len(d); n > 0 && strings.ToLower(host[n:]) == d {
			labels = host[:n]
			break
		}
	}
	if labels == "" {
		return "", false, nil
	}
	parts := strings.Split(strings.Trim(labels, "."), ".")
	var container, account string
	switch len(parts) {
	case 1:
		account = parts[0]
	case 2:
		container, account = parts[0], parts[1]
	default:
		return "", false, BadRequest("Bad domain in host header")
	}
	if !strings.Contains(account, "_") && strings.Contains(account, "-") {
		account = strings.Replace(account, "-", "_", 1)
	}
	prefix, name, ok := strings.Cut(account, "_")
	if !ok || !strings.EqualFold(prefix+"_", ResellerPrefix) {
		return "", false, nil
	}
	newPath = "/v1/" + ResellerPrefix + name
	if container != "" {
		newPath += "/" + container
	}
	return newPath + "/" + strings.TrimPrefix(path, "/"), true, nil
}
