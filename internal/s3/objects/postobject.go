package objects

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/s3/checksum"
	"github.com/cairn-store/cairn/internal/s3/postpolicy"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
)

// POST Object: a browser's form upload (POST /bucket, multipart/form-data). The form carries
// its own credentials (a policy signed with SigV4 or SigV2) or none (anonymous), so serve hands
// the request here before authenticating; the rules of the form, its signature and its policy
// are package postpolicy's. Once the form is authenticated the upload is a PutObject: the same
// access decision, metadata, ACL, checksums, quota and write path, with the form's fields in
// place of headers and the file part, streamed, as the body.

// IsFormPost reports whether a bucket POST is a form upload.
func IsFormPost(hdr http.Header) bool {
	ct := strings.ToLower(strings.TrimSpace(hdr.Get("Content-Type")))
	return strings.HasPrefix(ct, "multipart/form-data")
}

// formTransportFields are x-amz-* fields that describe a request's transport or signature,
// not the object: they never become headers of the upload.
var formTransportFields = map[string]bool{
	"x-amz-algorithm": true, "x-amz-credential": true, "x-amz-date": true, "x-amz-signature": true,
	"x-amz-security-token": true, "x-amz-content-sha256": true, "x-amz-decoded-content-length": true,
	"x-amz-trailer": true,
}

// formHeader turns a form's fields into the request headers a PUT of the same object would
// carry, so that the PUT path reads them as it reads headers: Content-Type and the stored
// content headers, Content-MD5, acl (x-amz-acl) and every other x-amz-* field (x-amz-meta-*,
// the checksums, the storage class, and those refused as on PUT). The request's own headers do
// not apply to the object; of them, only what access decisions read (Referer, the expected
// bucket owner) is kept.
func formHeader(r *http.Request, fields postpolicy.Fields) (http.Header, error) {
	hdr := http.Header{}
	for _, k := range []string{"Referer", "X-Amz-Expected-Bucket-Owner"} {
		if v := r.Header.Get(k); v != "" {
			hdr.Set(k, v)
		}
	}
	for name, v := range fields {
		switch {
		case name == "tagging":
			return nil, s3core.ErrNotImplemented.WithMessage("The tagging field is not implemented.")
		case name == "acl":
			// Set below, so that it wins over an x-amz-acl field whatever the order.
		case name == "content-type" || name == "content-md5" || isStoredHeader(name),
			strings.HasPrefix(name, "x-amz-") && !formTransportFields[name]:
			hdr.Set(http.CanonicalHeaderKey(name), v)
		}
	}
	if fields.Has("acl") {
		hdr.Set("X-Amz-Acl", fields.Get("acl"))
	}
	return hdr, nil
}

func isStoredHeader(name string) bool {
	for _, k := range meta.StoredHeaders {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// PostObject serves the S3 operation of that name.
func (h *Handler) PostObject(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	form, err := postpolicy.ReadForm(r.Body, r.Header.Get("Content-Type"), rq.Bucket)
	if err != nil {
		return postBodyError(fmt.Errorf("POST form: %w", err))
	}
	signed, err := postpolicy.Authenticate(ctx, form.Fields, h.Cfg.Credentials, h.Verify.Region)
	if err != nil {
		return fmt.Errorf("POST form: %w", err)
	}
	minLen, maxLen := int64(0), h.Cfg.MaxObjectSize
	if signed != nil {
		if signed.Credential.Account == "" {
			return fmt.Errorf("access key %q has no account: %w", signed.Credential.AccessKey, s3core.ErrAccessDenied)
		}
		rq.Who = s3core.IdentityOf(signed.Credential)
		rq.Auth = &sigv4.Auth{Credential: signed.Credential, SignatureV2: signed.SignatureV2, Time: h.Cfg.Now(),
			Payload: sigv4.PayloadUnsigned, DecodedContentLength: -1}
		p := signed.Policy
		if err := p.Check(form.Fields, h.Cfg.Now()); err != nil {
			return fmt.Errorf("POST form of %q: %w", signed.Credential.AccessKey, err)
		}
		if p.HasLengthRange {
			minLen, maxLen = p.MinLength, min(maxLen, p.MaxLength)
		}
	}
	rq.Key = form.Fields.Get("key")
	if err := s3core.CheckKey(rq.Key); err != nil {
		return err
	}
	hdr, err := formHeader(r, form.Fields)
	if err != nil {
		return err
	}
	// The access decision and the ACL read headers: give them the form's.
	fr := r.WithContext(ctx)
	fr.Header = hdr
	if err := h.Authorize(ctx, fr, rq); err != nil {
		return err
	}
	if err := CheckWriteHeaders(hdr); err != nil {
		return err
	}
	obj, err := s3core.ObjectMetaFromRequest(hdr)
	if err != nil {
		return err
	}
	if err := h.ObjectSettings(fr, rq, &obj); err != nil {
		return err
	}
	ssew, err := h.SSEForWrite(fr, rq)
	if err != nil {
		return err
	}
	spec, err := checksum.FromHeaders(hdr)
	if err != nil {
		return err
	}
	// The file's length is known only at its end; the request's is an upper bound (the file
	// and the fields before it) by which the quota is checked, as a PUT's by its length. A
	// body of unknown length (chunked) is checked by the object it adds, as Swift checks a
	// chunked PUT.
	var bound int64
	if r.ContentLength >= 0 {
		bound = min(maxLen, r.ContentLength)
	}
	if err := h.CheckQuota(ctx, rq, access.Usage{Bytes: bound, Objects: 1}); err != nil {
		return err
	}
	file := postpolicy.LimitFile(form.File, minLen, maxLen)
	plain, err := rq.Auth.Body(file)
	if err != nil {
		return fmt.Errorf("POST form file: %w", err)
	}
	body := &s3core.VerifiedBody{Body: plain, Spec: spec}
	if spec.Algorithm != "" {
		body.Sum = spec.Algorithm.New()
	}
	obj.Size = -1
	var putBody io.Reader = body
	opts := proxy.PutOptions{BeforeCommit: body.BeforeCommit}
	var enc *encryptingBody
	if ssew != nil {
		if enc, err = h.encrypt(ctx, ssew, rq.Binding(), body, -1, ""); err != nil {
			return err
		}
		putBody, opts.BeforeCommit = enc, enc.BeforeCommit(body.BeforeCommit, -1, true)
		SetBucketKey(&obj, ssew)
	}
	stored, err := h.Proxy.PutObject(ctx, rq.ObjectName(), obj, putBody, opts)
	if err != nil {
		if file.Err != nil {
			return file.Err // the size bound, whatever the layers below made of it
		}
		return postBodyError(fmt.Errorf("POST object %q: %w", rq.Key, err))
	}
	etag := stored.ETag
	if enc != nil {
		etag = enc.servedETag(stored.ETag)
		WriteSSEHeaders(w.Header(), enc.env, ssew.KeyMD5, ssew.BucketKey)
	}
	h.writePostSuccess(w, r, rq, form.Fields, s3core.QuoteETag(etag))
	return nil
}

// postBodyError reports a body that ended before its multipart framing did as the client's
// failure (IncompleteBody), not the server's.
func postBodyError(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, meta.ErrIncompleteBody) {
		return fmt.Errorf("%w: %w", s3core.ErrIncompleteBody, err)
	}
	return err
}

// writePostSuccess answers a stored form upload as S3 does: a 303 to success_action_redirect
// (or the older redirect) with bucket, key and etag added to its query, when that is a URL;
// else the success_action_status asked for: 200 or 204 with no body, 201 with a PostResponse
// document; anything else is 204.
func (h *Handler) writePostSuccess(w http.ResponseWriter, r *http.Request, rq *s3core.Request, fields postpolicy.Fields, etag string) {
	location := h.objectURL(r, rq)
	hdr := w.Header()
	hdr.Set("ETag", etag)
	hdr.Set("Location", location)
	redirect := fields.Get("success_action_redirect")
	if redirect == "" {
		redirect = fields.Get("redirect")
	}
	if u, err := url.Parse(redirect); redirect != "" && err == nil && u.IsAbs() && (u.Scheme == "http" || u.Scheme == "https") {
		// In this order, as S3 sends them (clients compare the whole URL).
		q := "bucket=" + url.QueryEscape(rq.Bucket) + "&key=" + url.QueryEscape(rq.Key) + "&etag=" + url.QueryEscape(etag)
		if u.RawQuery != "" {
			u.RawQuery += "&" + q
		} else {
			u.RawQuery = q
		}
		hdr.Set("Location", u.String())
		s3core.WriteEmpty(w, http.StatusSeeOther)
		return
	}
	switch fields.Get("success_action_status") {
	case "200":
		s3core.WriteEmpty(w, http.StatusOK)
	case "201":
		s3core.WriteXML(w, http.StatusCreated, s3xml.PostResponse{Location: location, Bucket: rq.Bucket, Key: rq.Key, ETag: etag})
	default:
		s3core.WriteEmpty(w, http.StatusNoContent)
	}
}

// objectURL is the URL of the request's object, in the addressing style the request used.
func (h *Handler) objectURL(r *http.Request, rq *s3core.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	path := "/" + sigv4.URIEncode(rq.Bucket, false) + "/" + sigv4.URIEncode(rq.Key, false)
	if s3core.ParseTarget(r, h.Cfg.Domains).VirtualHost {
		path = "/" + sigv4.URIEncode(rq.Key, false)
	}
	return scheme + "://" + r.Host + path
}
