package objects

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/versions"
)

// Symlinks are made through the Swift API (internal/swift): an empty object whose SysMeta
// names another. A GET or HEAD through S3 follows them, as Swift's s3api does (its requests go
// through Swift's symlink middleware): at most maxSymlinkHops links in a row, each target
// readable by the caller as a direct GetObject would be. A static link whose target no longer
// has the ETag it was made with is PreconditionFailed.

// maxSymlinkHops is Swift's default symloop_max.
const maxSymlinkHops = 2

var errSymlinkLoop = &s3core.APIError{Code: "InvalidRequest", Status: http.StatusBadRequest, Message: "Too many levels of symbolic links, maximum allowed is 2."}

// followSymlink returns the request for what the symlink link (read for rq) stands for.
func (h *Handler) followSymlink(ctx context.Context, r *http.Request, rq *s3core.Request, link *meta.Object) (*s3core.Request, error) {
	if rq.SymlinkHops >= maxSymlinkHops {
		return nil, errSymlinkLoop
	}
	if vobj, id, ok := versions.LinkedVersion(link); ok && rq.Stored == nil {
		// The current version of an object in a versioned bucket: read as the object itself
		// (same bucket, same access), from where the version is kept.
		t := *rq
		t.Stored = &meta.ObjectName{Account: rq.Account, Container: versions.ContainerFor(rq.Bucket), Object: vobj}
		t.VersionID = id
		t.SymlinkHops++
		t.SymlinkETag = link.SysMeta[meta.SysSymlinkETag]
		return &t, nil
	}
	account, container, key, _ := link.SymlinkTarget(rq.Account)
	st, err := h.BucketState(ctx, account, container)
	if errors.Is(err, meta.ErrNotFound) {
		return nil, fmt.Errorf("symlink target %s/%s: %w", container, key, s3core.ErrNoSuchKey)
	}
	if err != nil {
		return nil, fmt.Errorf("symlink target %s/%s: %w", container, key, err)
	}
	t := *rq
	t.Account, t.Bucket, t.Key, t.State = account, container, key, st
	t.SymlinkHops++
	// What comes next must have a static link's ETag; past a dynamic link nothing is checked.
	t.SymlinkETag = link.SysMeta[meta.SysSymlinkETag]
	if err := h.Allowed(ctx, &t, access.GetObject, key, r.Header.Get("Referer")); err != nil {
		return nil, err
	}
	return &t, nil
}

// checkSymlinkETag applies a static link's ETag to the object it reached. (A static link to a
// Swift static large object names the manifest's ETag, which S3 does not serve: not checked.)
func checkSymlinkETag(rq *s3core.Request, obj *meta.Object) error {
	if rq.SymlinkETag == "" || obj.IsManifest() || obj.SysMeta[meta.SysSymlinkTarget] != "" {
		return nil
	}
	if obj.ETag != rq.SymlinkETag {
		return s3core.ErrPreconditionFailed.WithMessage("The symlink's target no longer has the ETag the link was made with (%s).", rq.SymlinkETag)
	}
	return nil
}
