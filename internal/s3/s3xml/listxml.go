package s3xml

import (
	"bytes"
	"encoding/xml"
	"strconv"
)

// Listing pages are the largest documents the front end writes (up to 1000 entries) and the
// hottest when clients walk big buckets; encoding/xml's reflection costs several microseconds
// an entry. appendXML writes the same document (TestListXMLMatchesEncodingXML holds it to
// byte-for-byte equality) by appending.

func (r *ListBucketResult) AppendXML(b []byte) []byte {
	b = append(b, `<ListBucketResult xmlns="`...)
	b = appendEscaped(b, r.Xmlns)
	b = append(b, `">`...)
	b = appendElem(b, "Name", r.Name)
	b = appendElem(b, "Prefix", r.Prefix)
	if r.Marker != nil {
		b = appendElem(b, "Marker", *r.Marker)
	}
	b = appendElemOmitEmpty(b, "NextMarker", r.NextMarker)
	if r.StartAfter != nil {
		b = appendElem(b, "StartAfter", *r.StartAfter)
	}
	if r.ContToken != nil {
		b = appendElem(b, "ContinuationToken", *r.ContToken)
	}
	b = appendElemOmitEmpty(b, "NextContinuationToken", r.NextContToken)
	if r.KeyCount != nil {
		b = appendIntElem(b, "KeyCount", int64(*r.KeyCount))
	}
	b = appendIntElem(b, "MaxKeys", int64(r.MaxKeys))
	b = appendElemOmitEmpty(b, "Delimiter", r.Delimiter)
	b = appendElemOmitEmpty(b, "EncodingType", r.EncodingType)
	b = appendElem(b, "IsTruncated", strconv.FormatBool(r.IsTruncated))
	for i := range r.Contents {
		c := &r.Contents[i]
		b = append(b, "<Contents>"...)
		b = appendElem(b, "Key", c.Key)
		b = appendElem(b, "LastModified", c.LastModified)
		b = appendElem(b, "ETag", c.ETag)
		for _, a := range c.ChecksumAlgorithm {
			b = appendElem(b, "ChecksumAlgorithm", a)
		}
		b = appendIntElem(b, "Size", c.Size)
		if c.Owner != nil {
			b = append(b, "<Owner>"...)
			b = appendElem(b, "ID", c.Owner.ID)
			b = appendElem(b, "DisplayName", c.Owner.DisplayName)
			b = append(b, "</Owner>"...)
		}
		b = appendElem(b, "StorageClass", c.StorageClass)
		b = append(b, "</Contents>"...)
	}
	for _, p := range r.CommonPrefixes {
		b = append(b, "<CommonPrefixes>"...)
		b = appendElem(b, "Prefix", p.Prefix)
		b = append(b, "</CommonPrefixes>"...)
	}
	return append(b, "</ListBucketResult>"...)
}

func appendElem(b []byte, name, text string) []byte {
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, '>')
	b = appendEscaped(b, text)
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, '>')
}

func appendElemOmitEmpty(b []byte, name, text string) []byte {
	if text == "" {
		return b
	}
	return appendElem(b, name, text)
}

func appendIntElem(b []byte, name string, v int64) []byte {
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, '>')
	b = strconv.AppendInt(b, v, 10)
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, '>')
}

// appendEscaped appends s escaped exactly as encoding/xml escapes text, taking the fast path for
// the common name that needs no escaping.
func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x80 || c == '&' || c == '<' || c == '>' || c == '"' || c == '\'' {
			var buf bytes.Buffer
			xml.EscapeText(&buf, []byte(s))
			return append(b, buf.Bytes()...)
		}
	}
	return append(b, s...)
}
