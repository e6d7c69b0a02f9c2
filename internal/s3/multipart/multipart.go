package multipart

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/httpwire"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/s3/checksum"
	"github.com/cairn-store/cairn/internal/s3/objects"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/s3/tagging"
	"github.com/cairn-store/cairn/internal/sse"
	"github.com/cairn-store/cairn/internal/versions"
)

// Multipart uploads are built on ordinary objects, as Swift's s3api does. Each bucket has a
// hidden container (s3core.UploadsContainer) holding, per upload:
//
//	<key>\x00<uploadID>                 the upload marker: the object's future metadata
//	<key>\x00<uploadID>\x00<part 00001> each part, an ordinary object
//
// Keys cannot contain NUL, so a marker sorts with its key and its parts right after it.
// Completion writes the object as a manifest over the parts (which it then owns: replacing or
// deleting the object deletes them) and removes the marker and the parts it did not use.

func uploadMarkerName(key, uploadID string) string { return key + "\x00" + uploadID }

func partPrefix(key, uploadID string) string { return key + "\x00" + uploadID + "\x00" }

// PartName names part n of an upload in the uploads container.
func PartName(key, uploadID string, n int) string {
	return partPrefix(key, uploadID) + fmt.Sprintf("%05d", n)
}

// uploadIDPattern is the shape of the upload IDs newUploadID makes; anything else cannot name
// an upload and is refused before it reaches a name.
var uploadIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func newUploadID() string {
	var b [18]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// upload is an open multipart upload as its marker describes it.
type upload struct {
	id     string
	marker meta.Object
	alg    checksum.Algorithm
	typ    string
}

// openUpload finds the upload named by ?uploadId, NoSuchUpload if there is none.
func (h *Handler) openUpload(ctx context.Context, rq *s3core.Request) (*upload, error) {
	id := rq.Query.Get("uploadId")
	if !uploadIDPattern.MatchString(id) {
		return nil, s3core.ErrNoSuchUpload
	}
	name := meta.ObjectName{Account: rq.Account, Container: s3core.UploadsContainer(rq.Bucket), Object: uploadMarkerName(rq.Key, id)}
	m, err := h.Proxy.HeadObject(ctx, name)
	if errors.Is(err, meta.ErrNotFound) {
		if _, berr := h.RequireBucket(ctx, rq); berr != nil {
			return nil, berr
		}
		return nil, fmt.Errorf("upload %s of %q: %w", id, rq.Key, s3core.ErrNoSuchUpload)
	}
	if err != nil {
		return nil, fmt.Errorf("upload %s of %q: %w", id, rq.Key, err)
	}
	return &upload{id: id, marker: m, alg: checksum.Algorithm(m.SysMeta[objects.SysUploadChecksumAlgorithm]), typ: m.SysMeta[objects.SysUploadChecksumType]}, nil
}

// CreateMultipartUpload serves the S3 operation of that name.
func (h *Handler) CreateMultipartUpload(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	if err := objects.CheckWriteHeaders(r.Header); err != nil {
		return err
	}
	obj, err := s3core.ObjectMetaFromRequest(r.Header)
	if err != nil {
		return err
	}
	var alg checksum.Algorithm
	if v := r.Header.Get("X-Amz-Checksum-Algorithm"); v != "" {
		if alg, err = checksum.ParseAlgorithm(v); err != nil {
			return err
		}
	}
	typ := strings.ToUpper(r.Header.Get("X-Amz-Checksum-Type"))
	switch {
	case typ != "" && alg == "":
		return s3core.ErrInvalidRequest.WithMessage("The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.")
	case typ == "" && alg == checksum.CRC64NVME:
		typ = s3core.ChecksumFullObject // the only kind CRC64NVME has
	case typ == "" && alg != "":
		typ = s3core.ChecksumComposite
	case typ == s3core.ChecksumFullObject && !checksum.CanCombine(alg):
		return s3core.ErrInvalidRequest.WithMessage("The %s algorithm is not supported for the FULL_OBJECT checksum type.", alg)
	case typ == s3core.ChecksumComposite && alg == checksum.CRC64NVME:
		return s3core.ErrInvalidRequest.WithMessage("The CRC64NVME algorithm is not supported for the COMPOSITE checksum type.")
	case typ != "" && typ != s3core.ChecksumFullObject && typ != s3core.ChecksumComposite:
		return s3core.ErrInvalidRequest.WithMessage("Invalid x-amz-checksum-type %q.", typ)
	}
	// The ACL, lock and tags wait on the marker for the completed object.
	if err := h.ObjectSettings(r, rq, &obj); err != nil {
		return err
	}
	ssew, err := h.SSEForWrite(r, rq)
	if err != nil {
		return err
	}
	if ssew != nil {
		// One data key for the upload: each part is a stream of its own under it (named by
		// the part's stored name), and the completed object carries the envelope.
		_, env, err := h.Cfg.Keys.NewDataKey(ctx, ssew.Req, rq.Binding())
		if err != nil {
			return s3core.SSEAPIError(err)
		}
		if obj.SysMeta == nil {
			obj.SysMeta = map[string]string{}
		}
		obj.SysMeta[sse.SysEnvelope] = env.Encode()
		objects.SetBucketKey(&obj, ssew)
		objects.WriteSSEHeaders(w.Header(), env, ssew.KeyMD5, ssew.BucketKey)
	}
	bucket, err := h.RequireBucket(ctx, rq)
	if err != nil {
		return err
	}
	// The upload's marker is an object of the account's usage.
	if err := h.CheckQuota(ctx, rq, access.Usage{Objects: 1}); err != nil {
		return err
	}
	// The parts are the object's bytes: they go to the bucket's storage policy (an uploads
	// container made before the bucket had one keeps its own).
	var um map[string]string
	if v, ok := bucket.Meta[meta.ContainerPolicyKey]; ok {
		um = map[string]string{meta.ContainerPolicyKey: v}
	}
	if err := h.Proxy.CreateContainer(ctx, rq.Account, s3core.UploadsContainer(rq.Bucket), um); err != nil && !errors.Is(err, meta.ErrExists) && !errors.Is(err, proxy.ErrPolicyConflict) {
		return fmt.Errorf("create uploads container of %q: %w", rq.Bucket, err)
	}
	id := newUploadID()
	if obj.SysMeta == nil {
		obj.SysMeta = map[string]string{}
	}
	if alg != "" {
		obj.SysMeta[objects.SysUploadChecksumAlgorithm] = string(alg)
		obj.SysMeta[objects.SysUploadChecksumType] = typ
	}
	marker := meta.ObjectName{Account: rq.Account, Container: s3core.UploadsContainer(rq.Bucket), Object: uploadMarkerName(rq.Key, id)}
	if _, err := h.Proxy.PutObject(ctx, marker, obj, nil, proxy.PutOptions{}); err != nil {
		return fmt.Errorf("create upload of %q: %w", rq.Key, err)
	}
	if alg != "" {
		w.Header().Set("X-Amz-Checksum-Algorithm", string(alg))
		w.Header().Set("X-Amz-Checksum-Type", typ)
	}
	s3core.WriteXML(w, http.StatusOK, s3xml.InitiateMultipartUploadResult{Xmlns: s3xml.Namespace, Bucket: rq.Bucket, Key: rq.Key, UploadID: id})
	return nil
}

func parsePartNumber(q map[string][]string) (int, error) {
	v := ""
	if vs := q["partNumber"]; len(vs) > 0 {
		v = vs[0]
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > s3core.MaxPartNumber {
		return 0, s3core.ErrInvalidArgument.WithMessage("Part number must be an integer between 1 and %d, inclusive", s3core.MaxPartNumber)
	}
	return n, nil
}

// UploadPart serves the S3 operation of that name.
func (h *Handler) UploadPart(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	n, err := parsePartNumber(rq.Query)
	if err != nil {
		return err
	}
	up, err := h.openUpload(ctx, rq)
	if err != nil {
		return err
	}
	body, size, err := h.OpenBody(r, rq, up.alg)
	if err != nil {
		return err
	}
	if up.alg != "" && body.Spec.Algorithm != up.alg {
		return s3core.ErrInvalidRequest.WithMessage("Checksum Type mismatch occurred, expected checksum Type: %s, actual checksum Type: %s", strings.ToLower(string(up.alg)), strings.ToLower(string(body.Spec.Algorithm)))
	}
	if err := h.CheckQuota(ctx, rq, access.Usage{Bytes: size, Objects: 1}); err != nil {
		return err
	}
	dk, env, keyMD5, err := h.uploadKey(ctx, r, rq, up)
	if err != nil {
		return err
	}
	name := meta.ObjectName{Account: rq.Account, Container: s3core.UploadsContainer(rq.Bucket), Object: NewPartAttemptName(rq.Key, up.id, n)}
	stillOpen := func(obj *meta.Object) error {
		if err := body.BeforeCommit(obj); err != nil {
			return err
		}
		return h.stillOpen(ctx, rq, up)
	}
	putBody, storedSize, opts, err := h.encryptPart(env, dk, body, size, name.Object, stillOpen)
	if err != nil {
		return err
	}
	stored, err := h.Proxy.PutObject(ctx, name, meta.Object{Size: storedSize}, putBody, opts)
	if err != nil {
		return fmt.Errorf("upload part %d of %q: %w", n, rq.Key, err)
	}
	hdr := w.Header()
	hdr.Set("ETag", s3core.QuoteETag(stored.ETag))
	objects.WriteSSEHeaders(hdr, env, keyMD5, up.marker.SysMeta[objects.SSEBucketKey] != "")
	if body.Checksum != "" {
		hdr.Set(body.Spec.Algorithm.HeaderName(), body.Checksum)
	}
	s3core.WriteEmpty(w, http.StatusOK)
	return nil
}

// parseCopySourceRange reads x-amz-copy-source-range: exactly "bytes=first-last".
func parseCopySourceRange(v string) (*meta.Range, error) {
	if v == "" {
		return nil, nil
	}
	bad := s3core.ErrInvalidArgument.WithMessage("The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy")
	spec, ok := strings.CutPrefix(v, "bytes=")
	if !ok {
		return nil, bad
	}
	a, b, ok := strings.Cut(spec, "-")
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || first < 0 || last < first {
		return nil, bad
	}
	return &meta.Range{Start: first, End: last}, nil
}

// UploadPartCopy serves the S3 operation of that name.
func (h *Handler) UploadPartCopy(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	n, err := parsePartNumber(rq.Query)
	if err != nil {
		return err
	}
	rng, err := parseCopySourceRange(r.Header.Get("X-Amz-Copy-Source-Range"))
	if err != nil {
		return err
	}
	up, err := h.openUpload(ctx, rq)
	if err != nil {
		return err
	}
	dk, env, keyMD5, err := h.uploadKey(ctx, r, rq, up)
	if err != nil {
		return err
	}
	rd, _, err := h.OpenCopySource(ctx, r, rq, rng)
	if errors.Is(err, s3core.ErrInvalidRange) || errors.Is(err, meta.ErrInvalidRange) {
		// (meta's: an encrypted source's range checked against its stored streams.)
		return s3core.ErrInvalidArgument.WithMessage("Range specified is not valid for source object")
	}
	if err != nil {
		return err
	}
	defer rd.Close()
	if rng != nil && rng.End >= rd.Object.Size {
		return s3core.ErrInvalidArgument.WithMessage("Range specified is not valid for source object of size: %d", rd.Object.Size)
	}
	if rd.Length > h.Cfg.MaxObjectSize {
		return s3core.ErrEntityTooLarge
	}
	if err := h.CheckQuota(ctx, rq, access.Usage{Bytes: rd.Length, Objects: 1}); err != nil {
		return err
	}
	body := &s3core.VerifiedBody{Body: objects.PlainBody{Reader: rd}, Spec: checksum.Spec{Algorithm: up.alg}}
	if up.alg != "" {
		body.Sum = up.alg.New()
	}
	name := meta.ObjectName{Account: rq.Account, Container: s3core.UploadsContainer(rq.Bucket), Object: NewPartAttemptName(rq.Key, up.id, n)}
	stillOpen := func(obj *meta.Object) error {
		if err := body.BeforeCommit(obj); err != nil {
			return err
		}
		return h.stillOpen(ctx, rq, up)
	}
	putBody, storedSize, opts, err := h.encryptPart(env, dk, body, rd.Length, name.Object, stillOpen)
	if err != nil {
		return err
	}
	stored, err := h.Proxy.PutObject(ctx, name, meta.Object{Size: storedSize}, putBody, opts)
	if err != nil {
		return fmt.Errorf("upload part %d of %q by copy: %w", n, rq.Key, err)
	}
	objects.WriteSSEHeaders(w.Header(), env, keyMD5, up.marker.SysMeta[objects.SSEBucketKey] != "")
	res := s3xml.CopyPartResult{Xmlns: s3xml.Namespace, LastModified: s3xml.FormatISO(stored.LastModified()), ETag: s3core.QuoteETag(stored.ETag)}
	if body.Checksum != "" {
		s3core.SetChecksumFields(&res.ChecksumFields, up.alg, body.Checksum)
	}
	s3core.WriteXML(w, http.StatusOK, res)
	return nil
}

// stillOpen checks, just before a part commits, that its upload was neither completed nor
// aborted while the body streamed. Parts are immutable attempts, so one that slips past this
// check cannot damage a completed object; it is only garbage for the cleanup.
func (h *Handler) stillOpen(ctx context.Context, rq *s3core.Request, up *upload) error {
	m, err := h.Proxy.HeadObject(ctx, up.markerName(rq))
	if errors.Is(err, meta.ErrNotFound) || err == nil && h.claimBusy(&m) {
		return fmt.Errorf("upload %s ended during the part: %w", up.id, s3core.ErrNoSuchUpload)
	}
	return err
}

// listUploadParts returns the parts of an upload (each number's newest attempt), by number.
func (h *Handler) listUploadParts(ctx context.Context, rq *s3core.Request, uploadID string) (map[int]meta.ListEntry, error) {
	parts := map[int]meta.ListEntry{}
	err := h.partAttempts(ctx, rq, uploadID, 0, func(n int, part meta.ListEntry, _ []meta.ListEntry) bool {
		parts[n] = part
		return true
	})
	return parts, err
}

// CompleteMultipartUpload serves the S3 operation of that name.
func (h *Handler) CompleteMultipartUpload(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	// The upload is looked up before the body is read, as S3 does: a completion of an upload
	// that does not exist is NoSuchUpload whatever its body holds.
	up, err := h.openUpload(ctx, rq)
	if errors.Is(err, s3core.ErrNoSuchUpload) && h.answerCompleted(w, r, rq) {
		return nil
	}
	if err != nil {
		return err
	}
	// A completion's x-amz-checksum-* header is the whole object's checksum (compared once the
	// parts are known), not a checksum of the request document.
	doc := r.Clone(ctx)
	for _, a := range checksum.Algorithms {
		if v := doc.Header.Get(a.HeaderName()); v != "" {
			whole, _, _ := strings.Cut(v, "-") // a COMPOSITE checksum ends in "-N"
			if _, err := a.Decode(whole); err != nil {
				return err
			}
			doc.Header.Del(a.HeaderName())
		}
	}
	data, err := h.ReadSmallBody(doc, rq, s3core.MaxCompleteBodyBytes, false)
	if err != nil {
		return err
	}
	var req s3xml.CompleteMultipartUpload
	if err := s3core.DecodeXML(data, &req); err != nil {
		return err
	}
	if len(req.Parts) == 0 {
		return s3core.ErrMalformedXML.WithMessage("The XML you provided was not well-formed or did not validate against our published schema: no parts.")
	}
	// If-None-Match: * and If-Match hold against the key's current object, checked again in
	// the commit (atomic against racing writers), as on PutObject; a failed one leaves the
	// upload open, as in S3.
	cond, err := h.ConditionalWrite(ctx, r, rq)
	if err != nil {
		return err
	}
	if len(req.Parts) > s3core.MaxPartNumber {
		return s3core.ErrInvalidRequest.WithMessage("A completion lists at most %d parts.", s3core.MaxPartNumber)
	}
	for i, p := range req.Parts {
		if p.PartNumber < 1 || p.PartNumber > s3core.MaxPartNumber {
			return s3core.ErrInvalidPart.WithMessage("Part number %d is not between 1 and %d.", p.PartNumber, s3core.MaxPartNumber)
		}
		if i > 0 && p.PartNumber <= req.Parts[i-1].PartNumber {
			return s3core.ErrInvalidPartOrder
		}
	}
	// The upload is claimed before its parts are read, so that an Abort cannot remove them
	// between the reading and the object's write: the Abort then answers NoSuchUpload. From the
	// claim on, the completion runs to its end even if the client goes away; if it fails, the
	// upload is open again.
	claimed, release, err := h.claimUpload(ctx, rq, up)
	if errors.Is(err, s3core.ErrNoSuchUpload) && h.answerCompleted(w, r, rq) {
		return nil // another Complete of this upload finished first
	}
	if errors.Is(err, errUploadCompleting) {
		return s3core.ErrSlowDown.WithMessage("Another CompleteMultipartUpload of this upload is in progress; retry.")
	}
	if err != nil {
		return err
	}
	completed := false
	defer func() {
		if !completed {
			release()
		}
	}()
	ctx = context.WithoutCancel(ctx)
	stored, err := h.listUploadParts(ctx, rq, up.id)
	if err != nil {
		return err
	}
	segments := make([]meta.Segment, 0, len(req.Parts))
	etags := make([]string, 0, len(req.Parts))
	sums := make([]checksum.Part, 0, len(req.Parts))
	for i, p := range req.Parts {
		e, ok := stored[p.PartNumber]
		if !ok || !strings.EqualFold(httpwire.TrimETag(p.ETag), e.ETag) {
			return fmt.Errorf("part %d: %w", p.PartNumber, s3core.ErrInvalidPart)
		}
		if i < len(req.Parts)-1 && e.Size < s3core.MinPartSize {
			return s3core.ErrEntityTooSmall.WithMessage("Your proposed upload is smaller than the minimum allowed object size: part %d has %d bytes, parts but the last need %d.", p.PartNumber, e.Size, s3core.MinPartSize)
		}
		segments = append(segments, meta.Segment{Container: s3core.UploadsContainer(rq.Bucket), Object: e.Name, Size: e.Size, ETag: e.ETag})
		etags = append(etags, e.ETag)
		if up.alg != "" {
			pc, err := h.partChecksum(ctx, rq, e.Name, up.alg)
			if err != nil {
				return fmt.Errorf("part %d: %w", p.PartNumber, err)
			}
			if want := s3core.ChecksumField(&p.ChecksumFields, up.alg); want != "" && want != pc.Value {
				return s3core.ErrInvalidPart.WithMessage("The %s of part %d does not match the one uploaded.", up.alg, p.PartNumber)
			}
			sums = append(sums, pc)
		}
	}
	etag, err := multipartETag(etags)
	if err != nil {
		return err
	}
	// The completed object adds one object, and its whole size (the usage counters count the
	// manifest's listing entry at the object's size, besides its parts).
	var total int64
	for _, s := range segments {
		total += s.Size
	}
	if err := h.CheckQuota(ctx, rq, access.Usage{Bytes: total, Objects: 1}); err != nil {
		return err
	}
	obj := meta.Object{
		ContentType: up.marker.ContentType, Headers: up.marker.Headers, UserMeta: up.marker.UserMeta,
		ETag: etag, Manifest: segments,
		SysMeta: map[string]string{proxy.SysOwnsSegments: "1", objects.SysUploadID: up.id},
	}
	if v := up.marker.SysMeta[access.ObjectMetaACL]; v != "" {
		obj.SysMeta[access.ObjectMetaACL] = v
	}
	objects.SetTags(&obj, up.marker.SysMeta[tagging.ObjectSysMetaKey])
	if err := markCompletedEncrypted(&obj, &up.marker); err != nil {
		return err
	}
	// The lock asked for at the upload's start (or the bucket's default then) is the version's.
	for _, k := range []string{versions.SysLockMode, versions.SysLockUntil, versions.SysLockLegalHold} {
		if v := up.marker.SysMeta[k]; v != "" {
			obj.SysMeta[k] = v
		}
	}
	if up.alg != "" {
		var whole string
		if up.typ == s3core.ChecksumFullObject {
			whole, err = checksum.CombineFullObject(up.alg, sums)
		} else {
			values := make([]string, len(sums))
			for i, s := range sums {
				values[i] = s.Value
			}
			whole, err = checksum.Composite(up.alg, values)
		}
		if err != nil {
			return err
		}
		// The checksum a client sends with the completion must be the whole object's: the
		// FULL_OBJECT checksum, or the COMPOSITE one (with or without its "-N").
		if want := strings.TrimSpace(r.Header.Get(up.alg.HeaderName())); want != "" && want != whole &&
			(up.typ == s3core.ChecksumFullObject || want != strings.TrimSuffix(whole, "-"+strconv.Itoa(len(sums)))) {
			return &checksum.MismatchError{Algorithm: up.alg, Expected: want, Computed: whole}
		}
		obj.SysMeta[s3core.SysChecksumKey(up.alg)] = whole
		obj.SysMeta[s3core.SysChecksumType] = up.typ
	}
	done, versionID, err := h.Versions.Put(ctx, rq.Versioning(), rq.ObjectName(), obj, nil, proxy.PutOptions{If: cond})
	if err != nil {
		return s3core.VersionError(fmt.Errorf("complete upload %s of %q: %w", up.id, rq.Key, err))
	}
	if versionID != "" {
		w.Header().Set("x-amz-version-id", versionID)
	}
	if env, err := sse.EnvelopeOf(&up.marker); err == nil {
		objects.WriteSSEHeaders(w.Header(), env, r.Header.Get(s3core.HdrSSECPrefix+"Key-Md5"), up.marker.SysMeta[objects.SSEBucketKey] != "")
	}
	completed = true
	// The object is complete; what follows only tidies up, so failures are logged, not returned.
	if h.finishCompletion(ctx, rq, up, claimed) {
		// A stale claim's Complete may have won after all: what its object uses stays. If that
		// cannot be told, the upload sweeper removes the leftovers later.
		if keep, err := h.partsInUse(ctx, rq, up.id); err == nil {
			for _, s := range segments {
				keep[s.Object] = true
			}
			h.deleteParts(ctx, rq, up.id, keep)
		}
	}
	h.writeCompleteResult(w, r, rq, &done)
	return nil
}

// answerCompleted answers a Complete of an upload that no longer exists because a completion
// of it succeeded (a retry, or a racing Complete that won), as that completion was answered.
func (h *Handler) answerCompleted(w http.ResponseWriter, r *http.Request, rq *s3core.Request) bool {
	obj, err := h.Versions.Current(r.Context(), rq.ObjectName())
	if err != nil || obj.SysMeta[objects.SysUploadID] != rq.Query.Get("uploadId") {
		return false
	}
	h.writeCompleteResult(w, r, rq, &obj)
	return true
}

func (h *Handler) writeCompleteResult(w http.ResponseWriter, r *http.Request, rq *s3core.Request, obj *meta.Object) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	res := s3xml.CompleteMultipartUploadResult{
		Xmlns: s3xml.Namespace, Location: scheme + "://" + r.Host + "/" + rq.Bucket + "/" + s3core.S3URLEncode(rq.Key),
		Bucket: rq.Bucket, Key: rq.Key, ETag: s3core.QuoteETag(obj.ETag),
	}
	if alg, v, typ := s3core.StoredChecksum(obj); alg != "" {
		s3core.SetChecksumFields(&res.ChecksumFields, alg, v)
		res.ChecksumType = typ
	}
	s3core.WriteXML(w, http.StatusOK, res)
}

// partChecksum reads the checksum stored with a part.
func (h *Handler) partChecksum(ctx context.Context, rq *s3core.Request, part string, alg checksum.Algorithm) (checksum.Part, error) {
	o, err := h.Proxy.HeadObject(ctx, meta.ObjectName{Account: rq.Account, Container: s3core.UploadsContainer(rq.Bucket), Object: part})
	if err != nil {
		if errors.Is(err, meta.ErrNotFound) {
			return checksum.Part{}, s3core.ErrInvalidPart
		}
		return checksum.Part{}, err
	}
	v := o.SysMeta[s3core.SysChecksumKey(alg)]
	if v == "" {
		return checksum.Part{}, s3core.ErrInvalidPart.WithMessage("The part was uploaded without its %s checksum.", alg)
	}
	return checksum.Part{Value: v, Size: o.Size}, nil
}

// AbortMultipartUpload serves the S3 operation of that name.
func (h *Handler) AbortMultipartUpload(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	up, err := h.openUpload(ctx, rq)
	if err != nil {
		return err
	}
	if err := h.abortUpload(ctx, rq, up); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusNoContent)
	return nil
}

// abortUpload ends an open upload and removes its parts (AbortMultipartUpload, and the
// lifecycle's AbortIncompleteMultipartUpload).
func (h *Handler) abortUpload(ctx context.Context, rq *s3core.Request, up *upload) error {
	// The marker goes first, and only if it is still the open upload we read: from then on no
	// part can be added, and no Complete can claim it.
	if err := h.endUpload(ctx, rq, up); err != nil {
		return err
	}
	// The parts go now; if that cannot be done safely, the upload sweeper removes them later.
	if keep, err := h.partsInUse(ctx, rq, up.id); err == nil {
		h.deleteParts(context.WithoutCancel(ctx), rq, up.id, keep)
	}
	return nil
}

// deleteParts deletes every part attempt of an ended upload except those in keep.
func (h *Handler) deleteParts(ctx context.Context, rq *s3core.Request, uploadID string, keep map[string]bool) {
	var doomed []string
	err := h.partAttempts(ctx, rq, uploadID, 0, func(_ int, part meta.ListEntry, older []meta.ListEntry) bool {
		for _, e := range append(older, part) {
			if !keep[e.Name] {
				doomed = append(doomed, e.Name)
			}
		}
		return true
	})
	if err != nil {
		h.Log.WarnContext(ctx, "s3 cannot list an ended upload's parts; leaving garbage", "upload", uploadID, "err", err)
	}
	for _, name := range doomed {
		h.DeleteQuietly(ctx, rq.Account, s3core.UploadsContainer(rq.Bucket), name)
	}
}

// partsInUse returns the part names that the object now under the key uses, if a Complete of
// upload id wrote it; cleanup must never delete those. An error means it cannot tell.
func (h *Handler) partsInUse(ctx context.Context, rq *s3core.Request, id string) (map[string]bool, error) {
	inUse := map[string]bool{}
	cur, err := h.Versions.Current(ctx, rq.ObjectName())
	if errors.Is(err, meta.ErrNotFound) {
		return inUse, nil
	}
	if err != nil {
		return nil, fmt.Errorf("object of upload %s: %w", id, err)
	}
	if cur.SysMeta[objects.SysUploadID] == id {
		for _, s := range cur.Manifest {
			inUse[s.Object] = true
		}
	}
	return inUse, nil
}

// markerName names the object that says the upload is open.
func (up *upload) markerName(rq *s3core.Request) meta.ObjectName {
	return meta.ObjectName{Account: rq.Account, Container: s3core.UploadsContainer(rq.Bucket), Object: uploadMarkerName(rq.Key, up.id)}
}
