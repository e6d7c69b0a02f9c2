package s3

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/versions"
)

// Symlinks are made through the Swift API (internal/swift): an empty object whose SysMeta
// names another. A GET or HEAD through S3 follows them, as Swift's s3api does (its requests go
// through Swift's symlink middleware): at most maxSymlinkHops links in a row, each target
// readable by the caller as a direct GetObject would be. A static link whose target no longer
// has the ETag it was made with is PreconditionFailed.

// maxSymlinkHops is Swift's default symloop_max.
const maxSymlinkHops = 2

var errSymlinkLoop = &apiError{"InvalidRequest", http.StatusBadRequest, "Too many levels of symbolic links, maximum allowed is 2."}

// followSymlink returns the request for what the symlink link (read for rq) stands for.
func (h *Handler) followSymlink(ctx context.Context, r *http.Request, rq *request, link *meta.Object) (*request, error) {
	if rq.symlinkHops >= maxSymlinkHops {
		return nil, errSymlinkLoop
	}
	if vobj, id, ok := versions.LinkedVersion(link); ok && rq.stored == nil {
		// The current version of an object in a versioned bucket: read as the object itself
		// (same bucket, same access), from where the version is kept.
		t := *rq
		t.stored = &meta.ObjectName{Account: rq.account, Container: versions.ContainerFor(rq.bucket), Object: vobj}
		t.versionID = id
		t.symlinkHops++
		t.symlinkETag = link.SysMeta[meta.SysSymlinkETag]
		return &t, nil
	}
	account, container, key, _ := link.SymlinkTarget(rq.account)
	st, err := h.bucketState(ctx, account, container)
	if errors.Is(err, meta.ErrNotFound) {
		return nil, fmt.Errorf("symlink target %s/%s: %w", container, key, errNoSuchKey)
	}
	if err != nil {
		return nil, fmt.Errorf("symlink target %s/%s: %w", container, key, err)
	}
	t := *rq
	t.account, t.bucket, t.key, t.state = account, container, key, st
	t.symlinkHops++
	// What comes next must have a static link's ETag; past a dynamic link nothing is checked.
	t.symlinkETag = link.SysMeta[meta.SysSymlinkETag]
	if err := h.allowed(ctx, &t, access.GetObject, key, r.Header.Get("Referer")); err != nil {
		return nil, err
	}
	return &t, nil
}

// checkSymlinkETag applies a static link's ETag to the object it reached. (A static link to a
// Swift static large object names the manifest's ETag, which S3 does not serve: not checked.)
func checkSymlinkETag(rq *request, obj *meta.Object) error {
	if rq.symlinkETag == "" || obj.IsManifest() || obj.SysMeta[meta.SysSymlinkTarget] != "" {
		return nil
	}
	if obj.ETag != rq.symlinkETag {
		return errPreconditionFailed.withMessage("The symlink's target no longer has the ETag the link was made with (%s).", rq.symlinkETag)
	}
	return nil
}
