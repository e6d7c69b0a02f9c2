package postpolicy

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strings"
)

// Limits on what comes before the file. S3 takes at most 20 KB of fields before the file
// (MaxPostPreDataLengthExceededError); the raw bound also covers part headers and boundaries,
// so that a client cannot make the server hold more than this in memory before it has
// authenticated anything, whatever it puts in the framing.
const (
	MaxFieldBytes = 20 << 10
	maxRawPreData = 64 << 10
)

// Fields are a form's fields, by lower-cased name (S3 reads field names without case).
type Fields map[string]string

// Get returns the value of a field, "" when absent.
func (f Fields) Get(name string) string { return f[strings.ToLower(name)] }

// Has reports whether the form has the field.
func (f Fields) Has(name string) bool {
	_, ok := f[strings.ToLower(name)]
	return ok
}

// Form is a POST form read up to the start of its file.
type Form struct {
	// Fields are the fields that came before the file, with two changes: "key" has
	// ${filename} replaced by the file's name, and "bucket" is the bucket the request
	// addresses, whatever the form said (the policy's bucket condition is checked against it).
	Fields Fields
	// Filename is the file part's filename as the client sent it ("" when none).
	Filename string
	// File streams the file's bytes. It ends (io.EOF) only where its part ends with a
	// boundary, so a body cut short is an error, never a shorter file. Nothing after the
	// file is read: S3 ignores fields that follow it.
	File io.Reader
}

// ReadForm reads a multipart/form-data body up to the start of its file part (the part named
// "file"), keeping the fields before it. It reads at most about 64 KiB before the file; the
// file itself is left to the caller to stream. contentType is the request's Content-Type and
// bucket the bucket the request addresses.
//
// Errors: *Error wrapping ErrMalformedPOSTRequest, ErrPreDataTooLarge, ErrFileCount or
// ErrInvalidArgument (no key field before the file, a field given twice); a failure to read the body itself is returned wrapped as it came.
func ReadForm(body io.Reader, contentType, bucket string) (*Form, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, refuse(ErrMalformedPOSTRequest, "The body of your POST request is not well-formed multipart/form-data.")
	}
	pr := &phasedReader{r: body, left: maxRawPreData}
	mr := multipart.NewReader(pr, params["boundary"])
	fields := Fields{}
	budget := MaxFieldBytes
	for {
		part, err := mr.NextPart()
		if err != nil {
			return nil, pr.failure(err, true)
		}
		name := strings.ToLower(part.FormName())
		if name == "" {
			return nil, refuse(ErrMalformedPOSTRequest, "The body of your POST request is not well-formed multipart/form-data: a part without a form-data name.")
		}
		if name == "file" {
			pr.lift()
			f := &Form{Fields: fields, Filename: rawFilename(part), File: &fileReader{part: part, pr: pr}}
			k, ok := fields["key"]
			if !ok {
				return nil, missingField("key")
			}
			fields["key"] = strings.ReplaceAll(k, "${filename}", f.Filename)
			fields["bucket"] = bucket
			return f, nil
		}
		if _, dup := fields[name]; dup {
			return nil, refuse(ErrInvalidArgument, "The form field '%s' is specified more than once.", name)
		}
		budget -= len(name)
		if budget < 0 {
			return nil, tooLarge()
		}
		v, err := io.ReadAll(io.LimitReader(part, int64(budget)+1))
		if err != nil {
			return nil, pr.failure(err, false)
		}
		if budget -= len(v); budget < 0 {
			return nil, tooLarge()
		}
		fields[name] = string(v)
	}
}

func tooLarge() *Error {
	return refuse(ErrPreDataTooLarge, "Your POST request fields preceding the upload file were too large.")
}

// rawFilename is the filename parameter as sent: multipart.Part.FileName keeps only its last
// path element, but ${filename} is what the user's browser sent.
func rawFilename(p *multipart.Part) string {
	_, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
	if err != nil {
		return p.FileName()
	}
	return params["filename"]
}

// phasedReader bounds how much of the body is read before the file starts, and remembers a
// failure of the body itself, so that it is told apart from bad framing.
type phasedReader struct {
	r       io.Reader
	left    int64
	lifted  bool
	hit     bool  // the bound stopped a read
	bodyErr error // the body's own failure (not io.EOF)
}

var errPreDataBound = errors.New("postpolicy: pre-data bound reached")

func (p *phasedReader) Read(b []byte) (int, error) {
	if !p.lifted {
		if p.left <= 0 {
			p.hit = true
			return 0, errPreDataBound
		}
		if int64(len(b)) > p.left {
			b = b[:p.left]
		}
	}
	n, err := p.r.Read(b)
	if !p.lifted {
		p.left -= int64(n)
	}
	if err != nil && err != io.EOF {
		p.bodyErr = err
	}
	return n, err
}

func (p *phasedReader) lift() { p.lifted = true }

// failure explains an error of the multipart reader: the body's own failure, the pre-data
// bound, a form that ended without a file (atPart: the error came from looking for the next
// part), or bad framing.
func (p *phasedReader) failure(err error, atPart bool) error {
	switch {
	case p.bodyErr != nil:
		return fmt.Errorf("form body: %w", p.bodyErr)
	case p.hit:
		return tooLarge()
	case atPart && err == io.EOF:
		return refuse(ErrFileCount, "POST requires exactly one file upload per request.")
	}
	return &Error{Kind: ErrMalformedPOSTRequest, Message: "The body of your POST request is not well-formed multipart/form-data."}
}

// fileReader is the file part. Its errors are the body's own when the body failed (so that a
// timeout or a vanished client is reported as such), bad framing otherwise.
type fileReader struct {
	part *multipart.Part
	pr   *phasedReader
}

func (f *fileReader) Read(b []byte) (int, error) {
	n, err := f.part.Read(b)
	if err != nil && err != io.EOF {
		if f.pr.bodyErr != nil {
			return n, fmt.Errorf("form file: %w", f.pr.bodyErr)
		}
		return n, &Error{Kind: ErrMalformedPOSTRequest, Message: "The body of your POST request is not well-formed multipart/form-data: the file part does not end with a boundary."}
	}
	return n, err
}
