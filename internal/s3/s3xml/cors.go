package s3xml

import "encoding/xml"

// CORSConfiguration is a bucket's CORS configuration as PutBucketCors takes it and
// GetBucketCors gives it back: the rules in order, each with only the members it was given.
type CORSConfiguration struct {
	XMLName xml.Name   `xml:"CORSConfiguration"`
	Xmlns   string     `xml:"xmlns,attr,omitempty"`
	Rules   []CORSRule `xml:"CORSRule"`
}

// CORSRule is one rule of a CORSConfiguration. Element order follows S3's schema.
type CORSRule struct {
	ID             string   `xml:"ID,omitempty"`
	AllowedHeaders []string `xml:"AllowedHeader"`
	AllowedMethods []string `xml:"AllowedMethod"`
	AllowedOrigins []string `xml:"AllowedOrigin"`
	ExposeHeaders  []string `xml:"ExposeHeader"`
	MaxAgeSeconds  *int     `xml:"MaxAgeSeconds"`
}
