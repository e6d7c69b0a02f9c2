package s3core

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"

	"github.com/cairn-store/cairn/internal/meta"
)

// ObjectName is the object the request addresses.
func (rq *Request) ObjectName() meta.ObjectName {
	return meta.ObjectName{Account: rq.Account, Container: rq.Bucket, Object: rq.Key}
}

// NotFound tells NoSuchKey from NoSuchBucket after an object operation found nothing (the
// proxy does not look at the container on reads). A caller who may not list the bucket gets
// AccessDenied rather than NoSuchKey, as in S3, so that it cannot probe for keys.
func (h *Front) NotFound(ctx context.Context, rq *Request, err error) error {
	if !errors.Is(err, meta.ErrNotFound) || errors.Is(err, meta.ErrNoContainer) {
		return err
	}
	if _, cerr := h.Proxy.HeadContainer(ctx, rq.Account, rq.Bucket); errors.Is(cerr, meta.ErrNotFound) {
		return fmt.Errorf("%w: %w", ErrNoSuchBucket, err)
	}
	if !h.mayList(rq) {
		return fmt.Errorf("%w: %w", ErrAccessDenied, err)
	}
	return fmt.Errorf("%w: %w", ErrNoSuchKey, err)
}

// ObjectMetaOf is the client-visible metadata of an object, for a metadata rewrite.
func ObjectMetaOf(obj *meta.Object) meta.Object {
	return meta.Object{ContentType: obj.ContentType, Headers: obj.Headers, UserMeta: obj.UserMeta}
}

// SubresourceChange is the rewrite of an object's metadata that changes only the system
// metadata sys (its ACL, tags, retention or legal hold): the object's Last-Modified stays what
// it was, as S3 keeps it for these (meta.SysLastModified).
func SubresourceChange(obj *meta.Object, sys map[string]string) meta.Object {
	update := ObjectMetaOf(obj)
	update.SysMeta = make(map[string]string, len(sys)+1)
	maps.Copy(update.SysMeta, sys)
	update.SysMeta[meta.SysLastModified] = strconv.FormatInt(int64(obj.Modified()), 10)
	return update
}
