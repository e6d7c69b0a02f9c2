package swiftcore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
	"github.com/cairn-store/cairn/internal/versions"
)

var errVersionsMissing = &Error{Status: http.StatusInternalServerError, ContentType: ContentTypePlain,
	Body: "The versions container does not exist. You may want to re-enable object versioning."}

var ErrVersionsLeft = ErrConflict.WithText("Delete all versions before deleting container.")

// VersionState is the object versioning of a container (none when it does not exist: the
// operation itself says so).
func (h *Server) VersionState(ctx context.Context, account, container string) (versions.State, error) {
	c, err := h.HeadContainer(ctx, account, container)
	if errors.Is(err, meta.ErrNotFound) {
		return versions.State{}, nil
	}
	if err != nil {
		return versions.State{}, fmt.Errorf("head container %q: %w", container, err)
	}
	return versions.StateOf(c), nil
}

// VersionsError maps the version store's errors onto Swift's answers.
func VersionsError(err error) error {
	switch {
	case errors.Is(err, versions.ErrNoVersionsContainer):
		return fmt.Errorf("%w: %w", errVersionsMissing, err)
	case errors.Is(err, versions.ErrInvalidID):
		return fmt.Errorf("%w: %w", ErrBadRequest.WithText("Invalid version parameter"), err)
	case errors.Is(err, versions.ErrNoSuchVersion):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.Is(err, versions.ErrLocked):
		return fmt.Errorf("%w: %w", ErrForbidden.WithText("The version is protected by Object Lock."), err)
	}
	return err
}

// VersionsBytes is what a container's versions hold, which Swift adds to the container's bytes.
func (h *Server) VersionsBytes(ctx context.Context, account string, c meta.Container) int64 {
	vc := c.Meta[versions.KeyContainer]
	if vc == "" {
		return 0
	}
	v, err := h.HeadContainer(ctx, account, vc)
	if err != nil {
		return 0
	}
	return v.BytesUsed
}

// StoreObject stores a client's write of an object: a new version, and the object a link to
// it, in a container with object versioning on (X-Object-Version-Id answers its ID), else in
// place. Every object write goes through it (PUT, copy, manifest, symlink).
func (h *Server) StoreObject(ctx context.Context, w http.ResponseWriter, name meta.ObjectName, obj meta.Object, body io.Reader, opts proxy.PutOptions) (meta.Object, error) {
	st, err := h.VersionState(ctx, name.Account, name.Container)
	if err != nil {
		return meta.Object{}, err
	}
	if !st.Enabled {
		return h.Proxy.PutObject(ctx, name, obj, body, opts)
	}
	stored, id, err := h.Versions.Put(ctx, st, name, obj, body, opts)
	if err != nil {
		return stored, VersionsError(err)
	}
	w.Header().Set("X-Object-Version-Id", id)
	return stored, nil
}

// VersionLink reports whether obj is the link of an object in a versioned container to its
// current version (in the same account), and the version's ID.
func VersionLink(obj *meta.Object) (id string, ok bool) {
	if obj.SysMeta[SysSymlinkAccount] != "" {
		return "", false
	}
	_, id, ok = versions.LinkedVersion(obj)
	return id, ok
}

// VersionLocation is the Content-Location of a version: the object's path with ?version-id.
func VersionLocation(rq *Request, id string) string {
	return swiftwire.PyQuote("/v1/"+rq.Account+"/"+rq.Container+"/"+rq.Object) + "?version-id=" + id
}

// ListedVersion reads a container listing's entry: for a version link, the version's entry,
// ID and name in the versions container; else the entry itself.
func ListedVersion(e *meta.ListEntry, container string) (cur meta.ListEntry, id, vobj string) {
	vobj, ok := versions.ListedLink(*e, container)
	if !ok {
		return *e, "", ""
	}
	_, ts, _ := versions.SplitObjectName(vobj)
	return versions.AsCurrent(*e, container), versions.ID(ts), vobj
}
