package s3xml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
)

// Tagging is the document of object and bucket tagging: PutObjectTagging and PutBucketTagging
// send it, GetObjectTagging and GetBucketTagging answer it.
type Tagging struct {
	XMLName xml.Name `xml:"Tagging"`
	Xmlns   string   `xml:"xmlns,attr,omitempty"`
	// TagSet is always sent, empty for an object without tags, as S3 does: clients read
	// response["TagSet"] without checking it is there.
	TagSet TagSet `xml:"TagSet"`
}

type TagSet struct {
	Tags []Tag `xml:"Tag"`
}

type Tag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

// TaggingRequest is a Tagging document as a client sends it, with pointers where S3 requires
// an element, so that a missing TagSet, Key or Value can be told from an empty one.
type TaggingRequest struct {
	XMLName xml.Name `xml:"Tagging"`
	TagSet  *struct {
		Tags []struct {
			Key   *string `xml:"Key"`
			Value *string `xml:"Value"`
		} `xml:"Tag"`
	} `xml:"TagSet"`
}

// GetObjectAttributesResponse answers GET ?attributes. Every element but the ones asked for
// (x-amz-object-attributes) is left out.
type GetObjectAttributesResponse struct {
	XMLName      xml.Name                  `xml:"GetObjectAttributesResponse"`
	Xmlns        string                    `xml:"xmlns,attr"`
	ETag         string                    `xml:"ETag,omitempty"`
	Checksum     *ObjectChecksum           `xml:"Checksum"`
	ObjectParts  *GetObjectAttributesParts `xml:"ObjectParts"`
	StorageClass string                    `xml:"StorageClass,omitempty"`
	ObjectSize   *int64                    `xml:"ObjectSize"`
}

type ObjectChecksum struct {
	ChecksumFields
	ChecksumType string `xml:"ChecksumType,omitempty"`
}

// GetObjectAttributesParts is the ObjectParts element. S3 calls the count PartsCount on the
// wire (the SDKs' TotalPartsCount).
type GetObjectAttributesParts struct {
	PartsCount           int          `xml:"PartsCount"`
	PartNumberMarker     int          `xml:"PartNumberMarker"`
	NextPartNumberMarker int          `xml:"NextPartNumberMarker"`
	MaxParts             int          `xml:"MaxParts"`
	IsTruncated          bool         `xml:"IsTruncated"`
	Parts                []ObjectPart `xml:"Part"`
}

type ObjectPart struct {
	PartNumber int   `xml:"PartNumber"`
	Size       int64 `xml:"Size"`
	ChecksumFields
}

// ErrMalformed reports a request document that DecodeStrict refused.
var ErrMalformed = errors.New("s3xml: malformed document")

// DecodeStrict parses a request document strictly enough to reject garbage: anything that is
// not one well-formed element of the expected name, trailing content included, is
// ErrMalformed.
func DecodeStrict(body []byte, v any) error {
	dec := xml.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: after the document: %v", ErrMalformed, err)
		}
		switch t := tok.(type) {
		case xml.CharData:
			if len(bytes.TrimSpace(t)) != 0 {
				return fmt.Errorf("%w: text after the document", ErrMalformed)
			}
		case xml.Comment, xml.ProcInst:
		default:
			return fmt.Errorf("%w: content after the document", ErrMalformed)
		}
	}
}
