package swiftwire

import (
	"strings"

	"github.com/cairn-store/cairn/internal/httpwire"
)

// ParseDLOManifest checks an X-Object-Manifest value: "container/prefix" with both parts
// non-empty, no '?' or '&', and a prefix not starting with '/', as Swift requires. The value
// may be URL-quoted.
func ParseDLOManifest(v string) (container, prefix string, err error) {
	bad := BadRequest("X-Object-Manifest must be in the format container/prefix")
	if strings.ContainsAny(v, "?&") {
		return "", "", bad
	}
	v = httpwire.UnescapeLenient(v)
	container, prefix, ok := strings.Cut(v, "/")
	if !ok || container == "" || prefix == "" || strings.HasPrefix(prefix, "/") {
		return "", "", bad
	}
	if err := CheckContainerName(container); err != nil {
		return "", "", err
	}
	return container, prefix, nil
}
