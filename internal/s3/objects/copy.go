package objects

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/httpwire"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/s3/checksum"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/s3/tagging"
	"github.com/cairn-store/cairn/internal/sse"
	"github.com/cairn-store/cairn/internal/versions"
)

// parseCopySource reads x-amz-copy-source: "[/]bucket/key[?versionId=...]", URL-encoded. Only
// the "null" version exists in a Cairn bucket.
func parseCopySource(v string) (bucket, key, versionID string, err error) {
	path, query, hasQuery := strings.Cut(v, "?")
	decoded := httpwire.UnescapeLenient(path)
	if hasQuery {
		// versionId is the one parameter a copy source has; anything else is refused rather
		// than ignored, so that a mistyped parameter does not copy the wrong thing.
		unsupported := s3core.ErrInvalidArgument.WithMessage("Unsupported copy source parameter.")
		q, qerr := url.ParseQuery(query)
		if qerr != nil || len(q) != 1 || len(q["versionId"]) != 1 {
			return "", "", "", unsupported
		}
		if err := s3core.CheckVersionID(q); err != nil {
			return "", "", "", err
		}
		versionID = q.Get("versionId")
	}
	bucket, key, ok := s3core.SplitBucketKey(decoded)
	if !ok {
		return "", "", "", s3core.ErrInvalidArgument.WithMessage("Copy Source must mention the source bucket and key: sourcebucket/sourcekey")
	}
	if err := s3core.CheckBucketNameForAccess(bucket); err != nil {
		return "", "", "", err
	}
	if err := s3core.CheckKey(key); err != nil {
		return "", "", "", err
	}
	return bucket, key, versionID, nil
}

var errCopyDeleteMarker = s3core.ErrInvalidRequest.WithMessage("The source of a copy request may not specifically refer to a delete marker by version id.")

// OpenCopySource opens the source of a copy (or a range of it) and checks the
// x-amz-copy-source-if-* conditions against it. The source bucket is resolved like the
// request's own (it may be another account's), and reading it is decided as a GetObject.
// The source's request (its owner and access state resolved, and where the version read is
// kept: readName) is returned for further decisions about it.
func (h *Handler) OpenCopySource(ctx context.Context, r *http.Request, rq *s3core.Request, rng *meta.Range) (*proxy.ObjectReader, *s3core.Request, error) {
	hdr := r.Header
	bucket, key, versionID, err := parseCopySource(hdr.Get("X-Amz-Copy-Source"))
	if err != nil {
		return nil, nil, err
	}
	srcRq := &s3core.Request{ID: rq.ID, Who: rq.Who, Bucket: bucket, Key: key, Cond: rq.Cond}
	b, err := h.ResolveBucket(ctx, rq.Who, bucket)
	if err != nil {
		if rq.Who.Anonymous && errors.Is(err, s3core.ErrNoSuchBucket) {
			return nil, nil, fmt.Errorf("copy source: %w: %w", s3core.ErrAccessDenied, err)
		}
		return nil, nil, fmt.Errorf("copy source: %w", err)
	}
	srcRq.Account, srcRq.State = b.Owner, b.State
	if want := hdr.Get("X-Amz-Source-Expected-Bucket-Owner"); want != "" && want != srcRq.Account {
		return nil, nil, fmt.Errorf("x-amz-source-expected-bucket-owner %.80q: %w", want, s3core.ErrAccessDenied)
	}
	if err := h.Allowed(ctx, srcRq, access.GetObject, key, hdr.Get("Referer")); err != nil {
		return nil, nil, fmt.Errorf("copy source: %w", err)
	}
	name := meta.ObjectName{Account: srcRq.Account, Container: bucket, Object: key}
	rq.CopySourceVersionID = ""
	if versionID != "" {
		v, err := h.Versions.Resolve(ctx, srcRq.Versioning(), name, versionID)
		if errors.Is(err, versions.ErrNoSuchVersion) && versionID == versions.Null && !srcRq.Versioning().Versioned() {
			return nil, srcRq, h.NotFound(ctx, srcRq, fmt.Errorf("copy source %s/%s: %w", bucket, key, meta.ErrNotFound))
		}
		if err != nil {
			return nil, srcRq, s3core.VersionError(fmt.Errorf("copy source %s/%s: %w", bucket, key, err))
		}
		if v.DeleteMarker {
			return nil, srcRq, errCopyDeleteMarker
		}
		name, rq.CopySourceVersionID = v.Name, v.ID
	}
	rd, err := h.Proxy.GetObject(ctx, name, rng)
	if err == nil || errors.Is(err, meta.ErrInvalidRange) {
		// The current version of an object of a versioned bucket is read where it is kept.
		var link meta.Object
		if err == nil {
			link = rd.Object
		} else if l, herr := h.Proxy.HeadObjectBrief(ctx, name); herr == nil {
			link = l
		}
		if vobj, id, ok := versions.LinkedVersion(&link); ok {
			if rd != nil {
				rd.Close()
			}
			name = meta.ObjectName{Account: srcRq.Account, Container: versions.ContainerFor(bucket), Object: vobj}
			rq.CopySourceVersionID = id
			rd, err = h.Proxy.GetObject(ctx, name, rng)
		} else if err == nil && srcRq.Versioning().Versioned() && versionID == "" {
			rq.CopySourceVersionID = versions.Null
		}
	}
	if err != nil {
		if errors.Is(err, meta.ErrInvalidRange) {
			return nil, srcRq, s3core.ErrInvalidRange
		}
		return nil, srcRq, h.NotFound(ctx, srcRq, fmt.Errorf("copy source %s/%s: %w", bucket, key, err))
	}
	// An encrypted source is copied as its plaintext (decrypted with the
	// x-amz-copy-source-server-side-encryption-customer-* key if it is SSE-C).
	plain, _, _, err := h.decrypted(ctx, r, s3core.HdrCopySSECPrefix, sse.Binding{Bucket: bucket, Key: key}, name, rd, rng)
	if err != nil {
		rd.Close()
		return nil, srcRq, err
	}
	if plain != rd {
		plain.ReadCloser = closeBoth{plain.ReadCloser, rd}
		rd = plain
	}
	if err := readCopySourceConditions(hdr).evaluate(rd.Object.ETag, rd.Object.LastModified(), s3core.ErrPreconditionFailed); err != nil {
		rd.Close()
		return nil, srcRq, err
	}
	srcRq.Stored = &name
	return rd, srcRq, nil
}

// PlainBody is an already trusted body (a copy source) in the shape verifiedBody reads.
type PlainBody struct{ io.Reader }

func (PlainBody) Trailers() http.Header { return nil }

// CopyObject serves the S3 operation of that name.
func (h *Handler) CopyObject(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	if err := CheckWriteHeaders(r.Header); err != nil {
		return err
	}
	directive := strings.ToUpper(r.Header.Get("X-Amz-Metadata-Directive"))
	if directive != "" && directive != "COPY" && directive != "REPLACE" {
		return s3core.ErrInvalidArgument.WithMessage("Unknown metadata directive.")
	}
	// Tags are copied from the source unless x-amz-tagging-directive is REPLACE, when the copy
	// gets x-amz-tagging's (none without it).
	tagDirective := strings.ToUpper(r.Header.Get("X-Amz-Tagging-Directive"))
	if tagDirective != "" && tagDirective != "COPY" && tagDirective != "REPLACE" {
		return s3core.ErrInvalidArgument.WithMessage("Unknown tagging directive.")
	}
	var tags string
	if tagDirective == "REPLACE" {
		var err error
		if tags, err = tagsFromHeader(r.Header); err != nil {
			return err
		}
	}
	var alg checksum.Algorithm
	if v := r.Header.Get("X-Amz-Checksum-Algorithm"); v != "" {
		a, err := checksum.ParseAlgorithm(v)
		if err != nil {
			return err
		}
		alg = a
	}
	ssew, err := h.SSEForWrite(r, rq)
	if err != nil {
		return err
	}
	rd, srcRq, err := h.OpenCopySource(ctx, r, rq, nil)
	if err != nil {
		return err
	}
	defer rd.Close()
	src := srcRq.ReadName()
	srcObj := rd.Object
	if tagDirective != "REPLACE" {
		// Copying tags reads them: S3 asks for s3:GetObjectTagging on the source.
		if tags = srcObj.SysMeta[tagging.ObjectSysMetaKey]; tags != "" {
			if err := h.Allowed(ctx, srcRq, access.GetObjectTagging, srcRq.Key, r.Header.Get("Referer")); err != nil {
				return fmt.Errorf("copy source tags: %w", err)
			}
		}
	}
	if srcObj.Size > h.Cfg.MaxObjectSize {
		return s3core.ErrInvalidRequest.WithMessage("The specified copy source is larger than the maximum allowable size for a copy source: %d", h.Cfg.MaxObjectSize)
	}
	srcAlg, _, _ := s3core.StoredChecksum(&srcObj)
	if alg == "" {
		alg = srcAlg // the copy keeps the source's kind of checksum, recomputed over the whole
	}
	var obj meta.Object
	if directive == "REPLACE" {
		if obj, err = s3core.ObjectMetaFromRequest(r.Header); err != nil {
			return err
		}
	} else {
		obj = s3core.ObjectMetaOf(&srcObj)
	}
	// The copy has the ACL the request gives it (private by default), never the source's.
	if err := h.setObjectACL(r, rq, &obj); err != nil {
		return err
	}
	if err := h.lockFromHeaders(r.Context(), r, rq, &obj); err != nil {
		return err
	}
	SetTags(&obj, tags)
	dest := rq.ObjectName()
	// Asking for encryption by header changes the object's encryption attributes, which makes a
	// copy onto itself legal and rewrites its bytes.
	reencrypt := sseRequested(r.Header)
	if src == dest && !reencrypt {
		if directive != "REPLACE" && alg == srcAlg {
			return s3core.ErrInvalidRequest.WithMessage("This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.")
		}
		if alg == srcAlg && !rq.Versioning().Enabled {
			// Only metadata changes: rewrite it in place and keep the bytes (and, for a
			// multipart object, its parts). With versioning on (an object written before it,
			// in place) the copy is a new version and the null version is kept, as in S3.
			rd.Close()
			update := s3core.ObjectMetaOf(&obj)
			// A new write as S3 sees it: Last-Modified moves (a kept one is cleared).
			update.SysMeta = map[string]string{access.ObjectMetaACL: obj.SysMeta[access.ObjectMetaACL], tagging.ObjectSysMetaKey: tags, meta.SysLastModified: ""}
			updated, err := h.Proxy.PostObject(ctx, dest, update)
			if err != nil {
				return h.NotFound(ctx, rq, fmt.Errorf("copy %q onto itself: %w", rq.Key, err))
			}
			res := s3xml.CopyObjectResult{Xmlns: s3xml.Namespace, LastModified: s3xml.FormatISO(updated.LastModified()), ETag: s3core.QuoteETag(sse.Served(updated).ETag)}
			if a, v, _ := s3core.StoredChecksum(&updated); a != "" {
				s3core.SetChecksumFields(&res.ChecksumFields, a, v)
			}
			s3core.WriteXML(w, http.StatusOK, res)
			return nil
		}
	}
	if err := h.CheckQuota(ctx, rq, access.Usage{Bytes: rd.Length, Objects: 1}); err != nil {
		return err
	}
	body := &s3core.VerifiedBody{Body: PlainBody{rd}, Spec: checksum.Spec{Algorithm: alg}}
	if alg != "" {
		body.Sum = alg.New()
	}
	obj.Size = rd.Length
	var putBody io.Reader = body
	opts := proxy.PutOptions{BeforeCommit: body.BeforeCommit}
	var enc *encryptingBody
	if ssew != nil {
		if enc, err = h.encrypt(ctx, ssew, rq.Binding(), body, rd.Length, ""); err != nil {
			return err
		}
		putBody, obj.Size = enc, enc.StoredSize
		opts.BeforeCommit = enc.BeforeCommit(body.BeforeCommit, rd.Length, true)
		SetBucketKey(&obj, ssew)
	}
	stored, versionID, err := h.Versions.Put(ctx, rq.Versioning(), dest, obj, putBody, opts)
	if err != nil {
		return s3core.VersionError(fmt.Errorf("copy %s/%s to %q: %w", src.Container, src.Object, rq.Key, err))
	}
	if versionID != "" {
		w.Header().Set("x-amz-version-id", versionID)
	}
	if rq.CopySourceVersionID != "" {
		w.Header().Set("x-amz-copy-source-version-id", rq.CopySourceVersionID)
	}
	etag := stored.ETag
	if enc != nil {
		etag = enc.servedETag(stored.ETag)
		WriteSSEHeaders(w.Header(), enc.env, ssew.KeyMD5, ssew.BucketKey)
	}
	res := s3xml.CopyObjectResult{Xmlns: s3xml.Namespace, LastModified: s3xml.FormatISO(stored.LastModified()), ETag: s3core.QuoteETag(etag)}
	if body.Checksum != "" {
		s3core.SetChecksumFields(&res.ChecksumFields, alg, body.Checksum)
	}
	s3core.WriteXML(w, http.StatusOK, res)
	return nil
}
