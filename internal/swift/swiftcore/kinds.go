package swiftcore

import (
	"net/http"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// The kinds of object the features give meaning to, and the SysMeta keys that mark them: every
// part of the front end needs to tell a static or dynamic large object or a symlink from a
// plain object (to read, copy, list or delete it), while serving each kind is its feature's.

// SysSLO marks a manifest written through Swift's SLO API (SysMeta): it answers
// X-Static-Large-Object and ?multipart-manifest=get|delete. S3 multipart manifests, whose parts
// live in a container clients cannot name, do not carry it.
const SysSLO = "slo"

// IsSLO reports whether obj is a static large object's manifest.
func IsSLO(obj *meta.Object) bool { return obj.IsManifest() && obj.SysMeta[SysSLO] != "" }

// ManifestETag is the X-Manifest-Etag of a static large object: the MD5 of its stored manifest.
func ManifestETag(obj *meta.Object) string {
	if obj.Manifest == nil {
		// A brief HEAD: the ETag was stored with the manifest, first in its listing ETag.
		v, _, _ := strings.Cut(obj.SysMeta[meta.SysListingETag], ";")
		return strings.TrimSpace(v)
	}
	return swiftwire.MD5Hex(swiftwire.ManifestJSON(obj.Manifest))
}

// SysDLO is the SysMeta key of a DLO's "container/prefix"; SysDLORaw keeps X-Object-Manifest
// as sent, when that differs (URL-quoted), since Swift answers the header as it was sent.
const (
	SysDLO    = "dlo-manifest"
	SysDLORaw = "dlo-manifest-raw"
)

// IsDLO reports whether obj is a dynamic large object's manifest.
func IsDLO(obj *meta.Object) bool { return obj.SysMeta[SysDLO] != "" && !obj.IsManifest() }

// SysMeta keys of a symlink: the target as "container/object" (URL-quoted, as Swift keeps and
// shows it), its account when it was given (as sent, with AUTH_), and a static link's ETag and
// the target's size.
const (
	SysSymlinkTarget  = meta.SysSymlinkTarget
	SysSymlinkAccount = meta.SysSymlinkAccount
	SysSymlinkETag    = meta.SysSymlinkETag
	SysSymlinkBytes   = meta.SysSymlinkBytes
)

// IsSymlink reports whether obj is a symlink.
func IsSymlink(obj *meta.Object) bool { return obj.SysMeta[SysSymlinkTarget] != "" }

// writeSymlinkHeaders shows a symlink's settings, as ?symlink=get does.
func writeSymlinkHeaders(hdr http.Header, obj *meta.Object) {
	if !IsSymlink(obj) {
		return
	}
	hdr.Set("X-Symlink-Target", obj.SysMeta[SysSymlinkTarget])
	if a := obj.SysMeta[SysSymlinkAccount]; a != "" {
		hdr.Set("X-Symlink-Target-Account", a)
	}
	if e := obj.SysMeta[SysSymlinkETag]; e != "" {
		hdr.Set("X-Symlink-Target-Etag", e)
		hdr.Set("X-Symlink-Target-Bytes", obj.SysMeta[SysSymlinkBytes])
	}
}
