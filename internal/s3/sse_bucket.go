package s3

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"

	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/sse"
)

// Bucket default encryption (PutBucketEncryption, GetBucketEncryption, DeleteBucketEncryption):
// kept in the bucket's container metadata under bucketEncryptionKey and cached with its access
// state; objects written without encryption headers get it (sseForWrite).

const bucketEncryptionKey = "sys:s3-encryption"

// maxEncryptionDocument bounds a PutBucketEncryption document.
const maxEncryptionDocument = 16 << 10

type bucketEncryption struct {
	mode      sse.Mode
	kmsKeyID  string
	bucketKey bool
}

func (e *bucketEncryption) encode() string {
	v := url.Values{"alg": {string(e.mode)}}
	if e.kmsKeyID != "" {
		v.Set("kms", e.kmsKeyID)
	}
	if e.bucketKey {
		v.Set("bk", "1")
	}
	return v.Encode()
}

func decodeBucketEncryption(s string) (*bucketEncryption, error) {
	if s == "" {
		return nil, nil
	}
	v, err := url.ParseQuery(s)
	if err != nil {
		return nil, fmt.Errorf("bucket encryption %.80q: %w", s, err)
	}
	e := &bucketEncryption{mode: sse.Mode(v.Get("alg")), kmsKeyID: v.Get("kms"), bucketKey: v.Get("bk") == "1"}
	if e.mode != sse.ModeS3 && e.mode != sse.ModeKMS {
		return nil, fmt.Errorf("bucket encryption algorithm %.40q", e.mode)
	}
	return e, nil
}

type sseConfigDoc struct {
	XMLName xml.Name     `xml:"ServerSideEncryptionConfiguration"`
	Xmlns   string       `xml:"xmlns,attr,omitempty"`
	Rules   []sseRuleDoc `xml:"Rule"`
}

type sseRuleDoc struct {
	Default *sseDefaultDoc `xml:"ApplyServerSideEncryptionByDefault"`
	// BucketKeyEnabled is a pointer so that an absent element stays absent.
	BucketKeyEnabled *bool `xml:"BucketKeyEnabled,omitempty"`
}

type sseDefaultDoc struct {
	SSEAlgorithm   string `xml:"SSEAlgorithm"`
	KMSMasterKeyID string `xml:"KMSMasterKeyID,omitempty"`
}

func (h *Handler) getBucketEncryption(w http.ResponseWriter, r *http.Request, rq *request) error {
	e := rq.encryption
	if e == nil {
		return errNoEncryptionConfig
	}
	rule := sseRuleDoc{Default: &sseDefaultDoc{SSEAlgorithm: string(e.mode), KMSMasterKeyID: e.kmsKeyID}}
	bk := e.bucketKey
	rule.BucketKeyEnabled = &bk
	writeXML(w, http.StatusOK, sseConfigDoc{Xmlns: s3xml.Namespace, Rules: []sseRuleDoc{rule}})
	return nil
}

func (h *Handler) putBucketEncryption(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	if h.cfg.Keys == nil {
		return errSSEOff
	}
	body, err := h.readSmallBody(r, rq, maxEncryptionDocument, false)
	if err != nil {
		return err
	}
	var doc sseConfigDoc
	if err := decodeXML(body, &doc); err != nil {
		return err
	}
	if len(doc.Rules) != 1 || doc.Rules[0].Default == nil {
		return errMalformedXML
	}
	d := doc.Rules[0].Default
	e := &bucketEncryption{mode: sse.Mode(d.SSEAlgorithm), kmsKeyID: d.KMSMasterKeyID}
	switch {
	case e.mode != sse.ModeS3 && e.mode != sse.ModeKMS:
		return errMalformedXML.withMessage("The XML you provided was not well-formed or did not validate against our published schema: SSEAlgorithm must be AES256 or aws:kms.")
	case e.mode == sse.ModeS3 && e.kmsKeyID != "":
		return errInvalidArgument.withMessage("a KMSMasterKeyID is not applicable if the default sse algorithm is not aws:kms")
	}
	if e.mode == sse.ModeKMS {
		if e.kmsKeyID != "" {
			if _, err := h.cfg.Keys.KMSKey(ctx, e.kmsKeyID); err != nil {
				return sseAPIError(err)
			}
		}
		e.bucketKey = doc.Rules[0].BucketKeyEnabled != nil && *doc.Rules[0].BucketKeyEnabled
	}
	if err := h.setBucketMeta(ctx, rq, map[string]string{bucketEncryptionKey: e.encode()}); err != nil {
		return err
	}
	writeEmpty(w, http.StatusOK)
	return nil
}

func (h *Handler) deleteBucketEncryption(w http.ResponseWriter, r *http.Request, rq *request) error {
	if err := h.setBucketMeta(r.Context(), rq, map[string]string{bucketEncryptionKey: ""}); err != nil {
		return err
	}
	writeEmpty(w, http.StatusNoContent)
	return nil
}
