// Package objects is the S3 object data path: PutObject, GetObject, HeadObject and
// DeleteObject (with conditionals, ranges and versions), CopyObject, ListObjects (V1 and V2) and
// ListObjectVersions, DeleteObjects, browser form uploads (POST, with package postpolicy),
// server-side encryption of objects (package sse), Swift symlinks, GetObjectAttributes (with
// package objattr), and the per-object ACL, tagging, retention and legal hold operations. It
// depends on package s3core alone; package multipart builds uploads on its writes, copies and
// encryption.
//
// Files: handler.go (Handler), object.go (PUT/GET/HEAD/DELETE, conditionals, ranges),
// conditions.go (If-* headers, Range), copy.go (CopyObject, copy sources), list.go
// (ListObjects V1/V2), versions.go (ListObjectVersions), delete_multi.go (DeleteObjects),
// postobject.go (browser form uploads), sse.go (SSE-S3, SSE-KMS, SSE-C of objects),
// symlink.go (Swift symlinks), attributes.go (GetObjectAttributes), acl.go (object ACL),
// tagging.go (object tags; rules in package tagging), objectlock.go (Object Lock on writes,
// retention, legal hold), uploadmeta.go (SysMeta keys of multipart objects).
package objects

import "github.com/cairn-store/cairn/internal/s3/s3core"

// Handler serves the object operations; package s3's operation table holds its methods.
type Handler struct{ *s3core.Front }
