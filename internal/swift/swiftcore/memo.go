package swiftcore

import (
	"context"
	"sync"

	"github.com/cairn-store/cairn/internal/meta"
)

// An object request reads its container's record several times: for its ACLs, its quota, its
// ETag quoting, CORS, temp URL keys and versioning. The record is read once per request and
// remembered for that request only, so nothing goes stale between requests. Object operations
// never change a container's settings; the usage they change is read before the write.

type containerMemoKey struct{}

type containerMemo struct {
	mu sync.Mutex
	m  map[[2]string]containerMemoEntry
}

type containerMemoEntry struct {
	c   meta.Container
	err error
}

// WithContainerMemo gives an object request's context a memo of container records.
func WithContainerMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, containerMemoKey{}, &containerMemo{m: map[[2]string]containerMemoEntry{}})
}

// HeadContainer reads a container's record, once per object request.
func (h *Server) HeadContainer(ctx context.Context, account, container string) (meta.Container, error) {
	memo, _ := ctx.Value(containerMemoKey{}).(*containerMemo)
	if memo == nil {
		return h.Proxy.HeadContainer(ctx, account, container)
	}
	key := [2]string{account, container}
	memo.mu.Lock()
	e, ok := memo.m[key]
	memo.mu.Unlock()
	if ok {
		return e.c, e.err
	}
	c, err := h.Proxy.HeadContainer(ctx, account, container)
	if err != nil && ctx.Err() != nil {
		return c, err // a cancelled read is not the container's answer
	}
	memo.mu.Lock()
	memo.m[key] = containerMemoEntry{c, err}
	memo.mu.Unlock()
	return c, err
}
