// Package largeobj is Swift's large objects: static large objects (the slo middleware: a
// manifest of segments, checked when it is put and served by the proxy as one stream) and
// dynamic large objects (the dlo middleware: X-Object-Manifest names a container and a prefix
// whose objects, as listed at read time, read as one). It serves their PUT, GET and HEAD,
// copies and ?multipart-manifest=get|delete, and checks that the caller may read the segments.
// An SLO segment may be a symlink (resolved through package symlink); a manifest delete answers
// in the bulk middleware's format (package bulk). The marks of both kinds are swiftcore's.
//
// Files: largeobj.go (Handler), slo.go (static large objects), dlo.go (dynamic large objects).
package largeobj

import (
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/symlink"
)

// Handler serves large objects; it shares the front end's state (sym resolves symlinked
// segments).
type Handler struct {
	*swiftcore.Server
	sym *symlink.Handler
}

// New returns the feature's handler over the shared state.
func New(s *swiftcore.Server, sym *symlink.Handler) *Handler {
	return &Handler{Server: s, sym: sym}
}
