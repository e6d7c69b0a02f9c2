package swift

import (
	"net/url"
	"strings"
)

// dloManifest is the value of an X-Object-Manifest header: the segments of a dynamic large
// object are the objects of Container whose names start with Prefix, in name order.
type dloManifest struct {
	Container string
	Prefix    string
}

// errBadManifest is Swift's answer to a malformed X-Object-Manifest (dlo.py).
var errBadManifest = errBadRequest.withText("X-Object-Manifest must be in the format container/prefix")

// parseObjectManifest parses an X-Object-Manifest value as Swift's dlo middleware checks it on a
// PUT: "<container>/<prefix>", both non-empty, no '?' or '&', and a prefix not starting with
// '/'. Both parts are then URL-unquoted, as dlo.py does when it reads the segments; a part that
// does not unquote, or a container name Swift would refuse, is malformed too.
func parseObjectManifest(value string) (dloManifest, error) {
	container, prefix, ok := strings.Cut(value, "/")
	if !ok || container == "" || prefix == "" || strings.ContainsAny(value, "?&") ||
		strings.HasPrefix(prefix, "/") {
		return dloManifest{}, errBadManifest
	}
	c, err := url.PathUnescape(container)
	if err != nil {
		return dloManifest{}, errBadManifest
	}
	p, err := url.PathUnescape(prefix)
	if err != nil {
		return dloManifest{}, errBadManifest
	}
	if checkContainerName(c) != nil {
		return dloManifest{}, errBadManifest
	}
	return dloManifest{Container: c, Prefix: p}, nil
}
