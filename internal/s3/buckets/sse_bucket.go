package buckets

import (
	"encoding/xml"
	"net/http"

	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/sse"
)

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

// GetBucketEncryption serves the S3 operation of that name.
func (h *Handler) GetBucketEncryption(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	e := rq.Encryption
	if e == nil {
		return s3core.ErrNoEncryptionConfig
	}
	rule := sseRuleDoc{Default: &sseDefaultDoc{SSEAlgorithm: string(e.Mode), KMSMasterKeyID: e.KMSKeyID}}
	bk := e.BucketKey
	rule.BucketKeyEnabled = &bk
	s3core.WriteXML(w, http.StatusOK, sseConfigDoc{Xmlns: s3xml.Namespace, Rules: []sseRuleDoc{rule}})
	return nil
}

// PutBucketEncryption serves the S3 operation of that name.
func (h *Handler) PutBucketEncryption(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	if h.Cfg.Keys == nil {
		return s3core.ErrSSEOff
	}
	body, err := h.ReadSmallBody(r, rq, s3core.MaxEncryptionDocument, false)
	if err != nil {
		return err
	}
	var doc sseConfigDoc
	if err := s3core.DecodeXML(body, &doc); err != nil {
		return err
	}
	if len(doc.Rules) != 1 || doc.Rules[0].Default == nil {
		return s3core.ErrMalformedXML
	}
	d := doc.Rules[0].Default
	e := &s3core.BucketEncryption{Mode: sse.Mode(d.SSEAlgorithm), KMSKeyID: d.KMSMasterKeyID}
	switch {
	case e.Mode != sse.ModeS3 && e.Mode != sse.ModeKMS:
		return s3core.ErrMalformedXML.WithMessage("The XML you provided was not well-formed or did not validate against our published schema: SSEAlgorithm must be AES256 or aws:kms.")
	case e.Mode == sse.ModeS3 && e.KMSKeyID != "":
		return s3core.ErrInvalidArgument.WithMessage("a KMSMasterKeyID is not applicable if the default sse algorithm is not aws:kms")
	}
	if e.Mode == sse.ModeKMS {
		if e.KMSKeyID != "" {
			if _, err := h.Cfg.Keys.KMSKey(ctx, e.KMSKeyID); err != nil {
				return s3core.SSEAPIError(err)
			}
		}
		e.BucketKey = doc.Rules[0].BucketKeyEnabled != nil && *doc.Rules[0].BucketKeyEnabled
	}
	if err := h.SetBucketMeta(ctx, rq, map[string]string{s3core.BucketEncryptionKey: e.Encode()}); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusOK)
	return nil
}

// DeleteBucketEncryption serves the S3 operation of that name.
func (h *Handler) DeleteBucketEncryption(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	if err := h.SetBucketMeta(r.Context(), rq, map[string]string{s3core.BucketEncryptionKey: ""}); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusNoContent)
	return nil
}
