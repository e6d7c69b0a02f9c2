package swift

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// checkRequest applies the checks every /v1 request gets: header sizes and the names in its
// path.
func CheckRequest(r *http.Request, rq *Request) error {
	for k, vs := range r.Header {
		for _, v := range vs {
			if len(v) > swiftwire.MaxHeaderSize {
				return ErrBadRequest.WithText("Header value too long: %s", swiftwire.Truncate(k, swiftwire.MaxMetaNameLength))
			}
		}
	}
	if len(rq.Account) > swiftwire.MaxAccountNameLength {
		return ErrBadRequest.WithText("Account name length of %d longer than %d", len(rq.Account), swiftwire.MaxAccountNameLength).AsHTML()
	}
	if rq.Container != "" {
		if err := swiftwire.CheckContainerName(rq.Container); err != nil {
			return err
		}
	}
	if rq.Object != "" {
		if err := swiftwire.CheckObjectName(rq.Object); err != nil {
			return err
		}
	}
	return nil
}

// sysDeleteAt is the SysMeta key of an object's expiry (Unix seconds), X-Delete-At.
const SysDeleteAt = meta.SysDeleteAt

// deleteAt returns an object's expiry (0: none).
func DeleteAt(obj *meta.Object) int64 {
	n, _ := strconv.ParseInt(obj.SysMeta[SysDeleteAt], 10, 64)
	return n
}

// queueExpiry records an object's expiry in the proxy's expiry queue before the write that
// sets it, so that an acknowledged expiry is always carried out by the expirer.
func (h *Handler) QueueExpiry(ctx context.Context, name meta.ObjectName, sys map[string]string) error {
	at, _ := strconv.ParseInt(sys[SysDeleteAt], 10, 64)
	if at <= 0 {
		return nil
	}
	return h.Proxy.QueueExpiry(ctx, name, at)
}

// expired reports whether an object's X-Delete-At has passed: Swift answers 404 for it even
// before the expirer removes it.
func Expired(obj *meta.Object, now time.Time) bool {
	at := DeleteAt(obj)
	return at > 0 && now.Unix() >= at
}

// objectMetaFromRequest reads what a PUT (or a POST, which replaces it) gives an object:
// content type, content headers, user metadata and expiry.
func objectMetaFromRequest(hdr http.Header, objectName string, now time.Time) (meta.Object, error) {
	var obj meta.Object
	um, err := swiftwire.ReadMeta(hdr, "Object")
	if err != nil {
		return obj, err
	}
	for k, v := range um {
		// An empty value is kept (Swift answers it back as an empty header); only
		// X-Remove-Object-Meta-* stores nothing.
		if v == "" && len(hdr.Values("X-Object-Meta-"+k)) == 0 {
			continue
		}
		if obj.UserMeta == nil {
			obj.UserMeta = map[string]string{}
		}
		obj.UserMeta[k] = v
	}
	for _, k := range swiftwire.StoredHeaders {
		if v := hdr.Get(k); v != "" {
			if obj.Headers == nil {
				obj.Headers = map[string]string{}
			}
			obj.Headers[k] = v
		}
	}
	obj.ContentType = hdr.Get("Content-Type")
	if obj.ContentType == "" || swiftwire.Truthy(hdr.Get("X-Detect-Content-Type")) {
		obj.ContentType = swiftwire.GuessContentType(objectName)
	}
	at, err := swiftwire.ReadDeleteAt(hdr, now)
	if err != nil {
		return obj, err
	}
	if at > 0 {
		obj.SysMeta = map[string]string{SysDeleteAt: strconv.FormatInt(at, 10)}
	}
	if err := ReadDLOHeader(hdr, &obj); err != nil {
		return obj, err
	}
	return obj, nil
}
