package postpolicy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"strings"
	"testing"
	"testing/iotest"
)

type field struct{ name, value string }

// buildForm writes fields, then the file (when file is not nil) under the name fileField,
// then the trailing fields, and returns the body and its Content-Type.
func buildForm(t testing.TB, fields []field, fileField, filename string, file []byte, after ...field) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := mw.WriteField(f.name, f.value); err != nil {
			t.Fatal(err)
		}
	}
	if file != nil {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, fileField, filename))
		h.Set("Content-Type", "application/octet-stream")
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(file)
	}
	for _, f := range after {
		mw.WriteField(f.name, f.value)
	}
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

func TestReadForm(t *testing.T) {
	body, ct := buildForm(t, []field{{"kEy", "up/${filename}"}, {"Content-Type", "text/plain"}, {"X-Amz-Meta-Color", "blue"}, {"bucket", "other"}},
		"FILE", "photo.jpg", []byte("the file's bytes"), field{"x-amz-meta-after", "ignored"})
	f, err := ReadForm(bytes.NewReader(body), ct, "b")
	if err != nil {
		t.Fatal(err)
	}
	want := Fields{"key": "up/photo.jpg", "content-type": "text/plain", "x-amz-meta-color": "blue", "bucket": "b"}
	if len(f.Fields) != len(want) {
		t.Errorf("fields %v, want %v", f.Fields, want)
	}
	for k, v := range want {
		if f.Fields[k] != v {
			t.Errorf("field %s = %q, want %q", k, f.Fields[k], v)
		}
	}
	if f.Filename != "photo.jpg" {
		t.Errorf("filename %q", f.Filename)
	}
	data, err := io.ReadAll(f.File)
	if err != nil || string(data) != "the file's bytes" {
		t.Errorf("file %q, %v", data, err)
	}
}

// TestReadFormStreams proves the file is not buffered: a body that never ends still yields the
// fields and the file's first bytes.
func TestReadFormStreams(t *testing.T) {
	body, ct := buildForm(t, []field{{"key", "k"}}, "file", "", []byte("start"))
	head := body[:bytes.Index(body, []byte("start"))+len("start")]
	endless := io.MultiReader(bytes.NewReader(head), zeros{})
	f, err := ReadForm(endless, ct, "b")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 5)
	if _, err := io.ReadFull(f.File, got); err != nil || string(got) != "start" {
		t.Fatalf("first bytes %q, %v", got, err)
	}
	n, err := io.CopyN(io.Discard, f.File, 100<<20)
	if n != 100<<20 || err != nil {
		t.Fatalf("streamed %d bytes, %v", n, err)
	}
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) { clear(b); return len(b), nil }

func TestReadFormRefusals(t *testing.T) {
	big := strings.Repeat("x", MaxFieldBytes)
	bodyOf := func(fields []field, withFile bool) ([]byte, string) {
		var file []byte
		if withFile {
			file = []byte("data")
		}
		return buildForm(t, fields, "file", "f", file)
	}
	tests := []struct {
		name   string
		fields []field
		file   bool
		ct     string // overrides the form's Content-Type
		want   error
	}{
		{name: "no file", fields: []field{{"key", "k"}}, want: ErrFileCount},
		{name: "no key before the file", fields: []field{{"acl", "private"}}, file: true, want: ErrInvalidArgument},
		{name: "a field twice", fields: []field{{"key", "k"}, {"KEY", "k2"}}, file: true, want: ErrInvalidArgument},
		{name: "fields too large", fields: []field{{"key", "k"}, {"x-amz-meta-big", big}}, file: true, want: ErrPreDataTooLarge},
		{name: "many fields too large together", fields: manyFields(40, 600), file: true, want: ErrPreDataTooLarge},
		{name: "not multipart", fields: []field{{"key", "k"}}, file: true, ct: "application/x-www-form-urlencoded", want: ErrMalformedPOSTRequest},
		{name: "no boundary", fields: []field{{"key", "k"}}, file: true, ct: "multipart/form-data", want: ErrMalformedPOSTRequest},
		{name: "wrong boundary", fields: []field{{"key", "k"}}, file: true, ct: "multipart/form-data; boundary=nothere", want: ErrMalformedPOSTRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, ct := bodyOf(append([]field{}, tc.fields...), tc.file)
			if tc.ct != "" {
				ct = tc.ct
			}
			_, err := ReadForm(bytes.NewReader(body), ct, "b")
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
}

func manyFields(n, size int) []field {
	fs := []field{{"key", "k"}}
	for i := range n {
		fs = append(fs, field{fmt.Sprintf("x-amz-meta-f%d", i), strings.Repeat("v", size)})
	}
	return fs
}

// TestReadFormRawBound: huge part headers count against the bound too, though they are no
// field's value.
func TestReadFormRawBound(t *testing.T) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="key"`)
	h.Set("X-Padding", strings.Repeat("p", 200<<10))
	w, _ := mw.CreatePart(h)
	w.Write([]byte("k"))
	fw, _ := mw.CreateFormFile("file", "f")
	fw.Write([]byte("data"))
	mw.Close()
	_, err := ReadForm(&buf, mw.FormDataContentType(), "b")
	if !errors.Is(err, ErrPreDataTooLarge) {
		t.Fatalf("err %v, want ErrPreDataTooLarge", err)
	}
}

// TestReadFormCutShort: a body that ends inside the file, or fails, never reads as a shorter
// file.
func TestReadFormCutShort(t *testing.T) {
	body, ct := buildForm(t, []field{{"key", "k"}}, "file", "f", bytes.Repeat([]byte("d"), 10000))
	cut := body[:len(body)-500]

	f, err := ReadForm(bytes.NewReader(cut), ct, "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(f.File); !errors.Is(err, ErrMalformedPOSTRequest) {
		t.Errorf("file of a body that ends early: err %v, want ErrMalformedPOSTRequest", err)
	}

	gone := errors.New("connection reset")
	f, err = ReadForm(io.MultiReader(bytes.NewReader(cut), iotest.ErrReader(gone)), ct, "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(f.File); !errors.Is(err, gone) {
		t.Errorf("file of a body that fails: err %v, want the body's error", err)
	}

	_, err = ReadForm(io.MultiReader(bytes.NewReader(body[:40]), iotest.ErrReader(gone)), ct, "b")
	if !errors.Is(err, gone) {
		t.Errorf("fields of a body that fails: err %v, want the body's error", err)
	}
}

// FuzzReadForm feeds arbitrary bodies to the form reader and what it finds to the policy
// decoder and checker: whatever the input, they must answer (no panic, no hang) with a form
// or an error of the package's kinds, never read past the bound before the file, and keep
// the fields within their budget.
func FuzzReadForm(f *testing.F) {
	body, ct := buildForm(f, []field{{"key", "a/${filename}"}, {"policy", b64(`{"expiration":"2030-01-01T00:00:00Z","conditions":[{"bucket":"b"},["starts-with","$key","a/"],["content-length-range",1,10]]}`)}},
		"file", "x.txt", []byte("hello"))
	boundary := ct[strings.Index(ct, "boundary=")+len("boundary="):]
	f.Add(body, boundary)
	f.Add([]byte("--B\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nk\r\n--B--\r\n"), "B")
	f.Add([]byte("--B\r\nContent-Disposition: form-data; name=\"file\"; filename*=UTF-8''%e2%82%ac.txt\r\n\r\nx\r\n--B--"), "B")
	f.Fuzz(func(t *testing.T, body []byte, boundary string) {
		counted := &countingReader{r: bytes.NewReader(body)}
		form, err := ReadForm(counted, "multipart/form-data; boundary=\""+boundary+"\"", "b")
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error of no kind of the package: %v", err)
			}
			return
		}
		if counted.n > maxRawPreData+4096 {
			t.Fatalf("read %d bytes before the file", counted.n)
		}
		size := 0
		for k, v := range form.Fields {
			if k != "bucket" && k != "key" {
				size += len(k) + len(v)
			}
		}
		if size > MaxFieldBytes {
			t.Fatalf("fields of %d bytes kept", size)
		}
		io.Copy(io.Discard, LimitFile(form.File, 0, 1<<20))
		if p, err := ParsePolicy(form.Fields.Get("policy")); err == nil {
			p.Check(form.Fields, p.Expiration.Add(-1))
		}
	})
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += n
	return n, err
}
