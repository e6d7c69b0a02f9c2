// Package versioning is Swift's two ways of keeping an object's versions: versioned writes (the
// versioned_writes middleware: X-Versions-Location and X-History-Location name an archive
// container that every overwrite first copies the current object to) and object versioning (the
// object_versioning middleware: X-Versions-Enabled, versions kept by internal/versions in a
// reserved container, read, restored and deleted with ?version-id and listed with ?versions).
// It serves what each changes of container and object requests; a version that is a static
// large object is deleted through package largeobj. The object write path every writer uses
// (swiftcore.Server.StoreObject) and a container's version state are swiftcore's.
//
// Files: versioning.go (Handler), versioned.go (versioned writes), objversions.go (object
// versioning).
package versioning

import (
	"github.com/cairn-store/cairn/internal/swift/largeobj"
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
)

// Handler serves versioning; it shares the front end's state (lo deletes versions that are
// static large objects).
type Handler struct {
	*swiftcore.Server
	lo *largeobj.Handler
}

// New returns the feature's handler over the shared state.
func New(s *swiftcore.Server, lo *largeobj.Handler) *Handler {
	return &Handler{Server: s, lo: lo}
}
