package s3core

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"net/http"
	"strconv"

	"github.com/cairn-store/cairn/internal/s3/s3xml"
)

// Limits on the XML bodies clients send. S3 caps a multi-object delete at 1000 keys of at most
// 1024 bytes each and a completion at 10,000 parts; the limits leave room for markup and
// checksums but keep a hostile body from filling memory.
const (
	MaxCreateBucketBodyBytes = 64 << 10
	MaxDeleteBodyBytes       = 2 << 20
	MaxCompleteBodyBytes     = 4 << 20
	MaxACLBodyBytes          = 64 << 10
	// MaxPolicyBodyBytes is read before the policy's own 20 KiB limit is applied, so that a
	// policy slightly too large is MalformedPolicy, as in S3.
	MaxPolicyBodyBytes = 64 << 10
)

// WriteXML sends a document with S3's XML declaration.
func WriteXML(w http.ResponseWriter, status int, doc any) {
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	if l, ok := doc.(s3xml.ListBucketResult); ok {
		buf.Write(l.AppendXML(make([]byte, 0, 256+len(l.Contents)*200)))
	} else if err := xml.NewEncoder(&buf).Encode(doc); err != nil {
		// Every document here is a fixed struct; failing to encode one is a programming error.
		panic(fmt.Sprintf("s3: encoding %T: %v", doc, err))
	}
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// WriteEmpty ends a successful response that has no body. It carries Content-Length: 0 and the
// Content-Type Swift's s3api gives such answers, which clients written against Swift check.
func WriteEmpty(w http.ResponseWriter, status int) {
	hdr := w.Header()
	if hdr.Get("Content-Type") == "" {
		hdr.Set("Content-Type", "text/html; charset=UTF-8")
	}
	hdr.Set("Content-Length", "0")
	w.WriteHeader(status)
}

// DecodeXML parses an S3 request document strictly enough to reject garbage (anything that is
// not one well-formed element of the expected name, trailing content included) as MalformedXML.
func DecodeXML(body []byte, v any) error {
	if err := s3xml.DecodeStrict(body, v); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformedXML, err)
	}
	return nil
}

// Bucket documents.

// Listing documents.

// Object documents.

// Multi-object delete.

// Multipart.
