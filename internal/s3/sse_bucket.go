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

const BucketEncryptionKey = "sys:s3-encryption"

// maxEncryptionDocument bounds a PutBucketEncryption document.
const MaxEncryptionDocument = 16 << 10

type BucketEncryption struct {
	Mode      sse.Mode
	KmsKeyID  string
	BucketKey bool
}

func (e *BucketEncryption) Encode() string {
	v := url.Values{"alg": {string(e.Mode)}}
	if e.KmsKeyID != "" {
		v.Set("kms", e.KmsKeyID)
	}
	if e.BucketKey {
		v.Set("bk", "1")
	}
	return v.Encode()
}

func decodeBucketEncryption(s string) (*BucketEncryption, error) {
	if s == "" {
		return nil, nil
	}
	v, err := url.ParseQuery(s)
	if err != nil {
		return nil, fmt.Errorf("bucket encryption %.80q: %w", s, err)
	}
	e := &BucketEncryption{Mode: sse.Mode(v.Get("alg")), KmsKeyID: v.Get("kms"), BucketKey: v.Get("bk") == "1"}
	if e.Mode != sse.ModeS3 && e.Mode != sse.ModeKMS {
		return nil, fmt.Errorf("bucket encryption algorithm %.40q", e.Mode)
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

func (h *bucketsHandler) GetBucketEncryption(w http.ResponseWriter, r *http.Request, rq *Request) error {
	e := rq.Encryption
	if e == nil {
		return ErrNoEncryptionConfig
	}
	rule := sseRuleDoc{Default: &sseDefaultDoc{SSEAlgorithm: string(e.Mode), KMSMasterKeyID: e.KmsKeyID}}
	bk := e.BucketKey
	rule.BucketKeyEnabled = &bk
	WriteXML(w, http.StatusOK, sseConfigDoc{Xmlns: s3xml.Namespace, Rules: []sseRuleDoc{rule}})
	return nil
}

func (h *bucketsHandler) PutBucketEncryption(w http.ResponseWriter, r *http.Request, rq *Request) error {
	ctx := r.Context()
	if h.Cfg.Keys == nil {
		return ErrSSEOff
	}
	body, err := h.ReadSmallBody(r, rq, MaxEncryptionDocument, false)
	if err != nil {
		return err
	}
	var doc sseConfigDoc
	if err := DecodeXML(body, &doc); err != nil {
		return err
	}
	if len(doc.Rules) != 1 || doc.Rules[0].Default == nil {
		return ErrMalformedXML
	}
	d := doc.Rules[0].Default
	e := &BucketEncryption{Mode: sse.Mode(d.SSEAlgorithm), KmsKeyID: d.KMSMasterKeyID}
	switch {
	case e.Mode != sse.ModeS3 && e.Mode != sse.ModeKMS:
		return ErrMalformedXML.WithMessage("The XML you provided was not well-formed or did not validate against our published schema: SSEAlgorithm must be AES256 or aws:kms.")
	case e.Mode == sse.ModeS3 && e.KmsKeyID != "":
		return ErrInvalidArgument.WithMessage("a KMSMasterKeyID is not applicable if the default sse algorithm is not aws:kms")
	}
	if e.Mode == sse.ModeKMS {
		if e.KmsKeyID != "" {
			if _, err := h.Cfg.Keys.KMSKey(ctx, e.KmsKeyID); err != nil {
				return SseAPIError(err)
			}
		}
		e.BucketKey = doc.Rules[0].BucketKeyEnabled != nil && *doc.Rules[0].BucketKeyEnabled
	}
	if err := h.SetBucketMeta(ctx, rq, map[string]string{BucketEncryptionKey: e.Encode()}); err != nil {
		return err
	}
	WriteEmpty(w, http.StatusOK)
	return nil
}

func (h *bucketsHandler) DeleteBucketEncryption(w http.ResponseWriter, r *http.Request, rq *Request) error {
	if err := h.SetBucketMeta(r.Context(), rq, map[string]string{BucketEncryptionKey: ""}); err != nil {
		return err
	}
	WriteEmpty(w, http.StatusNoContent)
	return nil
}
