package versioning

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cairn-store/cairn/internal/httpwire"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
	"github.com/cairn-store/cairn/internal/versions"
)

// Versioned writes, Swift's X-Versions-Location and X-History-Location: a container names an
// archive container of the same account, and every overwrite first copies the current object
// there as <3 hex digits of the name's length><name>/<timestamp>. On DELETE, stack mode
// (X-Versions-Location) restores the newest archived version in place of the deleted one;
// history mode (X-History-Location) archives the current version, adds a delete marker and
// deletes it. The archive copies are made for the writer whatever the archive container's
// ACLs say, as Swift's middleware makes them.

// Container metadata keys of the setting: the location exactly as the client sent it (Swift
// shows it back that way) and the mode.
const (
	metaVersionsLocation = "versions-location"
	metaVersionsMode     = "versions-mode"
	versionsModeHistory  = "history"
)

// deleteMarkerType is the content type of the zero-byte object history mode archives when an
// object is deleted.
const deleteMarkerType = "application/x-deleted;swift_versions_deleted=1"

// ReadVersioningSettings reads a container PUT's or POST's versioning headers into changes,
// as Swift's versioned_writes middleware does: one of the two locations at a time (an empty
// one is ignored beside the other), an empty value or X-Remove-Versions-Location /
// X-Remove-History-Location clears the setting, and setting a location wins over removing it.
func ReadVersioningSettings(hdr http.Header, changes map[string]string) error {
	vals := map[string]string{}
	for _, k := range []string{"X-Versions-Location", "X-History-Location"} {
		if v, ok := hdr[k]; ok {
			vals[k] = strings.Join(v, ",")
		}
	}
	hist, hasHist := vals["X-History-Location"]
	vers, hasVers := vals["X-Versions-Location"]
	if hasHist && hasVers {
		switch {
		case hist == "":
			hasHist = false
		case vers != "":
			return swiftcore.ErrBadRequest.WithText("Only one of X-Versions-Location or X-History-Location may be specified")
		default:
			hasVers = false
		}
	}
	if hasVers || hasHist {
		loc, mode := vers, "stack"
		if hasHist {
			loc, mode = hist, versionsModeHistory
		}
		if loc != "" {
			if _, err := versionsContainer(loc); err != nil {
				return err
			}
			changes[metaVersionsLocation], changes[metaVersionsMode] = loc, mode
			return nil
		}
		changes[metaVersionsLocation], changes[metaVersionsMode] = "", ""
		return nil
	}
	if hdr.Get("X-Remove-Versions-Location") != "" || hdr.Get("X-Remove-History-Location") != "" {
		changes[metaVersionsLocation], changes[metaVersionsMode] = "", ""
	}
	return nil
}

// versionsContainer is the archive container a location names: URL-decoded, up to a '/'.
func versionsContainer(loc string) (string, error) {
	name, _, _ := strings.Cut(httpwire.UnescapeLenient(loc), "/")
	if name == "" {
		return "", swiftcore.ErrPreconditionFailed.WithText("Container name cannot be empty")
	}
	if err := swiftwire.CheckContainerName(name); err != nil {
		return "", err
	}
	return name, nil
}

// WriteVersioningHeaders shows a container's versioning setting under the header it was set with.
func WriteVersioningHeaders(hdr http.Header, c meta.Container) {
	loc := c.Meta[metaVersionsLocation]
	if loc == "" {
		return
	}
	if c.Meta[metaVersionsMode] == versionsModeHistory {
		hdr.Set("X-History-Location", loc)
	} else {
		hdr.Set("X-Versions-Location", loc)
	}
}

// Legacy is a container's versioned writes setting; a zero Archive means none.
type Legacy struct {
	Archive string
	History bool
}

func (h *Handler) ContainerVersioning(ctx context.Context, account, container string) (Legacy, error) {
	c, err := h.HeadContainer(ctx, account, container)
	if errors.Is(err, meta.ErrNotFound) {
		return Legacy{}, nil // the write itself will say so
	}
	if err != nil {
		return Legacy{}, fmt.Errorf("head container %q: %w", container, err)
	}
	loc := c.Meta[metaVersionsLocation]
	if loc == "" {
		return Legacy{}, nil
	}
	archive, err := versionsContainer(loc)
	if err != nil {
		return Legacy{}, nil // a setting stored before the rules tightened: versioning off
	}
	return Legacy{Archive: archive, History: c.Meta[metaVersionsMode] == versionsModeHistory}, nil
}

// versionsPrefix is where an object's archived versions are listed in the archive container.
func versionsPrefix(object string) string {
	return fmt.Sprintf("%03x%s/", len(object), object)
}

// ArchiveBeforeWrite copies the object about to be overwritten at name into its container's
// archive, if the container keeps versions and the object exists.
func (h *Handler) ArchiveBeforeWrite(ctx context.Context, name meta.ObjectName) error {
	v, err := h.ContainerVersioning(ctx, name.Account, name.Container)
	if err != nil || v.Archive == "" {
		return err
	}
	_, err = h.archiveCurrent(ctx, name, v)
	return err
}

// archiveCurrent copies the current object at name into the archive under its timestamp.
// archived is false when there is no current object.
func (h *Handler) archiveCurrent(ctx context.Context, name meta.ObjectName, v Legacy) (archived bool, err error) {
	cur, err := h.Proxy.HeadObject(ctx, name)
	if errors.Is(err, meta.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("versioning %q: %w", name.Object, err)
	}
	if swiftcore.Expired(&cur, h.Now()) {
		return false, nil
	}
	dst := meta.ObjectName{Account: name.Account, Container: v.Archive, Object: versionsPrefix(name.Object) + swiftwire.Timestamp(cur.Timestamp)}
	if err := h.copyAsStored(ctx, name, cur, dst); err != nil {
		return false, err
	}
	return true, nil
}

// copyAsStored copies an object with everything it has but its timestamp
// (versions.CopyAsStored: a static large object stays a manifest of the same segments, a
// dynamic one keeps its X-Object-Manifest), its expiry queued for the copy.
func (h *Handler) copyAsStored(ctx context.Context, src meta.ObjectName, obj meta.Object, dst meta.ObjectName) error {
	if err := h.QueueExpiry(ctx, dst, obj.SysMeta); err != nil {
		return err
	}
	if err := versions.CopyAsStored(ctx, h.Proxy, src, obj, dst, proxy.PutOptions{}); err != nil {
		return versioningError(err)
	}
	return nil
}

// versioningError is what a failed archive copy answers, as Swift's: a missing archive
// container is the client's mistake (412), anything else leaves the write undone (503).
func versioningError(err error) error {
	if errors.Is(err, meta.ErrNotFound) { // meta.ErrNoContainer included
		return fmt.Errorf("%w: %w", swiftcore.ErrPreconditionFailed, err)
	}
	return fmt.Errorf("%w: %w", swiftcore.ErrUnavailable, err)
}

// DeleteVersioned serves a DELETE in a container that keeps versions. done is false when the
// plain delete should go on (stack mode with nothing archived, or after history mode's copy).
func (h *Handler) DeleteVersioned(ctx context.Context, name meta.ObjectName, v Legacy) (done bool, err error) {
	if v.History {
		if _, err := h.archiveCurrent(ctx, name, v); err != nil {
			return false, err
		}
		marker := meta.ObjectName{Account: name.Account, Container: v.Archive, Object: versionsPrefix(name.Object) + swiftwire.Timestamp(meta.Now())}
		if _, err := h.Proxy.PutObject(ctx, marker, meta.Object{ContentType: deleteMarkerType}, strings.NewReader(""), proxy.PutOptions{}); err != nil {
			return false, versioningError(fmt.Errorf("versioning: delete marker: %w", err))
		}
		return false, nil
	}
	versions, err := h.archivedVersions(ctx, name, v)
	if err != nil || len(versions) == 0 {
		return false, err
	}
	if versions[0].ContentType == deleteMarkerType {
		// The newest entry records a delete: the current object, if there is one, was written
		// since and goes as a plain delete; otherwise the version before the marker comes back
		// and the marker goes.
		if _, err := h.Proxy.HeadObject(ctx, name); !errors.Is(err, meta.ErrNotFound) {
			return false, err
		}
		for _, e := range versions[1:] {
			if e.ContentType == deleteMarkerType {
				break
			}
			restored, err := h.restoreVersion(ctx, name, v, e.Name)
			if err != nil {
				return false, err
			}
			if restored {
				break
			}
		}
		return true, h.deleteArchived(ctx, name.Account, v.Archive, versions[0].Name)
	}
	for _, e := range versions {
		restored, err := h.restoreVersion(ctx, name, v, e.Name)
		if err != nil {
			return false, err
		}
		if restored {
			return true, nil
		}
	}
	return false, nil
}

// archivedVersions lists an object's newest archived versions, newest first. One page is
// enough: a DELETE uses the newest version, or the versions back to the newest delete marker.
func (h *Handler) archivedVersions(ctx context.Context, name meta.ObjectName, v Legacy) ([]meta.ListEntry, error) {
	page, err := h.Proxy.ListObjects(ctx, name.Account, v.Archive, meta.ListOptions{Prefix: versionsPrefix(name.Object), Reverse: true, Limit: 1000})
	if errors.Is(err, meta.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, versioningError(fmt.Errorf("versioning: list %s: %w", v.Archive, err))
	}
	return page.Objects, nil
}

// restoreVersion copies an archived version back over the object and deletes it from the
// archive. restored is false when the version vanished meanwhile.
func (h *Handler) restoreVersion(ctx context.Context, name meta.ObjectName, v Legacy, archived string) (restored bool, err error) {
	src := meta.ObjectName{Account: name.Account, Container: v.Archive, Object: archived}
	obj, err := h.Proxy.HeadObject(ctx, src)
	if errors.Is(err, meta.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, versioningError(fmt.Errorf("versioning: head %s/%s: %w", v.Archive, archived, err))
	}
	if err := h.copyAsStored(ctx, src, obj, name); err != nil {
		return false, err
	}
	return true, h.deleteArchived(ctx, name.Account, v.Archive, archived)
}

func (h *Handler) deleteArchived(ctx context.Context, account, archive, object string) error {
	err := h.Proxy.DeleteObject(ctx, meta.ObjectName{Account: account, Container: archive, Object: object})
	if err != nil && !errors.Is(err, meta.ErrNotFound) {
		return versioningError(fmt.Errorf("versioning: delete %s/%s: %w", archive, object, err))
	}
	return nil
}
