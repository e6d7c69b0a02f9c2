package swiftcore

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// CheckRequest applies the checks every /v1 request gets: header sizes and the names in its
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

// SysDeleteAt is the SysMeta key of an object's expiry (Unix seconds), X-Delete-At.
const SysDeleteAt = meta.SysDeleteAt

// DeleteAt returns an object's expiry (0: none).
func DeleteAt(obj *meta.Object) int64 {
	n, _ := strconv.ParseInt(obj.SysMeta[SysDeleteAt], 10, 64)
	return n
}

// QueueExpiry records an object's expiry in the proxy's expiry queue before the write that
// sets it, so that an acknowledged expiry is always carried out by the expirer.
func (h *Server) QueueExpiry(ctx context.Context, name meta.ObjectName, sys map[string]string) error {
	at, _ := strconv.ParseInt(sys[SysDeleteAt], 10, 64)
	if at <= 0 {
		return nil
	}
	return h.Proxy.QueueExpiry(ctx, name, at)
}

// Expired reports whether an object's X-Delete-At has passed: Swift answers 404 for it even
// before the expirer removes it.
func Expired(obj *meta.Object, now time.Time) bool {
	at := DeleteAt(obj)
	return at > 0 && now.Unix() >= at
}

// RequestHasBody reports whether a request carries any body bytes (a chunked one is peeked at).
func RequestHasBody(r *http.Request) (bool, error) {
	if len(r.TransferEncoding) == 0 {
		return r.ContentLength > 0, nil
	}
	var b [1]byte
	n, err := r.Body.Read(b[:])
	if n > 0 {
		return true, nil
	}
	if err != nil && err != io.EOF {
		return false, fmt.Errorf("symlink body: %w", err)
	}
	return false, nil
}
