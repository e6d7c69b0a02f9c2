package postpolicy

import (
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// wantKind fails unless err is an *Error of the given kind whose message contains msg.
func wantKind(t *testing.T, err error, kind error, msg string) {
	t.Helper()
	var pe *Error
	if !errors.As(err, &pe) || !errors.Is(err, kind) {
		t.Fatalf("err %v, want %v", err, kind)
	}
	if !strings.Contains(pe.Message, msg) {
		t.Fatalf("message %q, want it to contain %q", pe.Message, msg)
	}
}

func TestParsePolicy(t *testing.T) {
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name    string
		doc     string
		want    []Condition
		min     int64
		max     int64
		hasLen  bool
		wantErr string // message fragment of an InvalidPolicyDocument
	}{
		{name: "simple and list conditions",
			doc:  `{"expiration":"2030-01-02T03:04:05Z","conditions":[{"bucket":"b"},["starts-with","$key","user/"],["eq","$acl","private"]]}`,
			want: []Condition{{OpEq, "bucket", "b"}, {OpStartsWith, "key", "user/"}, {OpEq, "acl", "private"}}},
		{name: "milliseconds in the expiration, AWS's form",
			doc:  `{"expiration":"2030-01-02T03:04:05.000Z","conditions":[]}`,
			want: nil},
		{name: "names and operators without case",
			doc:  `{"expiration":"2030-01-02T03:04:05Z","conditions":[{"bUcKeT":"b"},["StArTs-WiTh","$KeY","foo"],["EQ","$Content-Type","text/plain"]]}`,
			want: []Condition{{OpEq, "bucket", "b"}, {OpStartsWith, "key", "foo"}, {OpEq, "content-type", "text/plain"}}},
		{name: "content-length-range",
			doc: `{"expiration":"2030-01-02T03:04:05Z","conditions":[["content-length-range",10,1000]]}`,
			min: 10, max: 1000, hasLen: true},
		{name: "content-length-range as strings, two of them intersected",
			doc: `{"expiration":"2030-01-02T03:04:05Z","conditions":[["content-length-range","10","1000"],["content-length-range",5,500]]}`,
			min: 10, max: 500, hasLen: true},
		{name: "a number as a simple condition's value",
			doc:  `{"expiration":"2030-01-02T03:04:05Z","conditions":[{"success_action_status":201}]}`,
			want: []Condition{{OpEq, "success_action_status", "201"}}},
		{name: "not JSON", doc: `{"expiration":`, wantErr: "Invalid JSON."},
		{name: "not an object", doc: `["expiration"]`, wantErr: "Invalid JSON."},
		{name: "trailing data", doc: `{"expiration":"2030-01-02T03:04:05Z","conditions":[]} {}`, wantErr: "Invalid JSON."},
		{name: "no expiration", doc: `{"conditions":[]}`, wantErr: "Policy missing expiration."},
		{name: "expiration with its case changed", doc: `{"EXPIRATION":"2030-01-02T03:04:05Z","conditions":[]}`, wantErr: "Policy missing expiration."},
		{name: "no conditions", doc: `{"expiration":"2030-01-02T03:04:05Z"}`, wantErr: "Policy missing conditions."},
		{name: "conditions with their case changed", doc: `{"expiration":"2030-01-02T03:04:05Z","CONDITIONS":[]}`, wantErr: "Policy missing conditions."},
		{name: "conditions not a list", doc: `{"expiration":"2030-01-02T03:04:05Z","conditions":{}}`, wantErr: "Invalid 'conditions'"},
		{name: "Python's str(datetime) as expiration", doc: `{"expiration":"2030-01-02 03:04:05.123456+00:00","conditions":[]}`, wantErr: "Invalid 'expiration' value"},
		{name: "expiration a number", doc: `{"expiration":12,"conditions":[]}`, wantErr: "Invalid 'expiration' value"},
		{name: "empty simple condition", doc: `{"expiration":"2030-01-02T03:04:05Z","conditions":[{}]}`, wantErr: "exactly one property"},
		{name: "simple condition of two properties", doc: `{"expiration":"2030-01-02T03:04:05Z","conditions":[{"a":"1","b":"2"}]}`, wantErr: "exactly one property"},
		{name: "simple condition of an object", doc: `{"expiration":"2030-01-02T03:04:05Z","conditions":[{"a":{}}]}`, wantErr: "value must be a string"},
		{name: "unknown operation", doc: `{"expiration":"2030-01-02T03:04:05Z","conditions":[["ends-with","$key","x"]]}`, wantErr: "unknown operation"},
		{name: "field without $", doc: `{"expiration":"2030-01-02T03:04:05Z","conditions":[["eq","key","x"]]}`, wantErr: `"$field"`},
		{name: "eq with too few elements", doc: `{"expiration":"2030-01-02T03:04:05Z","conditions":[["eq","$key"]]}`, wantErr: "takes a field and a value"},
		{name: "condition neither list nor object", doc: `{"expiration":"2030-01-02T03:04:05Z","conditions":["key"]}`, wantErr: "must be an object or a list"},
		{name: "empty list condition", doc: `{"expiration":"2030-01-02T03:04:05Z","conditions":[[]]}`, wantErr: "an empty list"},
		{name: "content-length-range without its maximum", doc: `{"expiration":"2030-01-02T03:04:05Z","conditions":[["content-length-range",0]]}`, wantErr: "takes a minimum and a maximum"},
		{name: "content-length-range negative", doc: `{"expiration":"2030-01-02T03:04:05Z","conditions":[["content-length-range",-1,0]]}`, wantErr: "non-negative integers"},
		{name: "content-length-range fractional", doc: `{"expiration":"2030-01-02T03:04:05Z","conditions":[["content-length-range",0,1.5]]}`, wantErr: "non-negative integers"},
		{name: "content-length-range reversed", doc: `{"expiration":"2030-01-02T03:04:05Z","conditions":[["content-length-range",10,5]]}`, wantErr: "larger than the maximum"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePolicy(b64(tc.doc))
			if tc.wantErr != "" {
				wantKind(t, err, ErrInvalidPolicyDocument, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !p.Expiration.Equal(exp) {
				t.Errorf("expiration %v, want %v", p.Expiration, exp)
			}
			if len(p.Conditions) != len(tc.want) {
				t.Fatalf("conditions %v, want %v", p.Conditions, tc.want)
			}
			for i := range tc.want {
				if p.Conditions[i] != tc.want[i] {
					t.Errorf("condition %d: %v, want %v", i, p.Conditions[i], tc.want[i])
				}
			}
			if p.HasLengthRange != tc.hasLen || p.MinLength != tc.min || p.MaxLength != tc.max {
				t.Errorf("length range %v [%d, %d], want %v [%d, %d]", p.HasLengthRange, p.MinLength, p.MaxLength, tc.hasLen, tc.min, tc.max)
			}
		})
	}
}

func TestParsePolicyBadBase64(t *testing.T) {
	_, err := ParsePolicy("not base64!")
	wantKind(t, err, ErrInvalidPolicyDocument, "Base64")
	// Line breaks inside the value are tolerated: some clients wrap long fields.
	doc := b64(`{"expiration":"2030-01-02T03:04:05Z","conditions":[]}`)
	if _, err := ParsePolicy(doc[:10] + "\r\n" + doc[10:]); err != nil {
		t.Fatalf("wrapped base64: %v", err)
	}
}

func TestCheck(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	policy := func(conds string) *Policy {
		t.Helper()
		p, err := ParsePolicy(b64(`{"expiration":"2030-01-02T00:00:00Z","conditions":[` + conds + `]}`))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := func(extra ...string) Fields {
		f := Fields{"bucket": "b", "key": "user/photo.jpg", "policy": "p", "x-amz-signature": "s"}
		for i := 0; i+1 < len(extra); i += 2 {
			f[extra[i]] = extra[i+1]
		}
		return f
	}
	const cover = `{"bucket":"b"},["starts-with","$key","user/"]`
	tests := []struct {
		name    string
		conds   string
		fields  Fields
		now     time.Time
		wantErr string // fragment of the AccessDenied message; "" for success
	}{
		{name: "all covered", conds: cover, fields: base()},
		{name: "exact match on bucket fails", conds: `{"bucket":"other"},["starts-with","$key",""]`, fields: base(),
			wantErr: `Policy Condition failed: ["eq", "$bucket", "other"]`},
		{name: "eq list form", conds: cover + `,["eq","$acl","private"]`, fields: base("acl", "private")},
		{name: "eq list form fails", conds: cover + `,["eq","$acl","private"]`, fields: base("acl", "public-read"),
			wantErr: `["eq", "$acl", "private"]`},
		{name: "starts-with fails", conds: `{"bucket":"b"},["starts-with","$key","admin/"]`, fields: base(),
			wantErr: `["starts-with", "$key", "admin/"]`},
		{name: "starts-with empty prefix allows anything", conds: `{"bucket":"b"},["starts-with","$key",""]`, fields: base()},
		{name: "starts-with is literal", conds: `{"bucket":"b"},["starts-with","$key","\\$foo"]`, fields: base("key", `\$foo.txt`)},
		{name: "condition on a missing field holds only for an empty value",
			conds: cover + `,["starts-with","$x-amz-meta-foo","bar"]`, fields: base(), wantErr: "x-amz-meta-foo"},
		{name: "eq to empty on a field that has a value",
			conds: cover + `,["eq","$x-amz-meta-foo",""]`, fields: base("x-amz-meta-foo", "barclamp"), wantErr: "x-amz-meta-foo"},
		{name: "extra field", conds: cover, fields: base("x-amz-meta-foo", "1", "acl", "private"),
			wantErr: "Extra input fields: acl, x-amz-meta-foo"},
		{name: "no bucket condition: bucket is an extra field", conds: `["starts-with","$key",""]`, fields: base(),
			wantErr: "Extra input fields: bucket"},
		{name: "exempt fields", conds: cover,
			fields: base("x-ignore-foo", "1", "awsaccesskeyid", "AK", "signature", "s", "file", "", "x-amz-checksum-sha256", "x")},
		{name: "Content-Type starts-with applies to each listed type", conds: cover + `,["starts-with","$content-type","image/"]`,
			fields: base("content-type", "image/png, image/jpeg")},
		{name: "Content-Type starts-with fails on one of the list", conds: cover + `,["starts-with","$content-type","image/"]`,
			fields: base("content-type", "image/png, text/plain"), wantErr: "content-type"},
		{name: "expired", conds: cover, fields: base(), now: time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC),
			wantErr: "Invalid according to Policy: Policy expired."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.now
			if n.IsZero() {
				n = now
			}
			err := policy(tc.conds).Check(tc.fields, n)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantKind(t, err, ErrPolicyDenied, tc.wantErr)
			if !strings.HasPrefix(err.(*Error).Message, "Invalid according to Policy: ") {
				t.Errorf("message %q lacks S3's prefix", err.(*Error).Message)
			}
		})
	}
}

func TestLimitFile(t *testing.T) {
	tests := []struct {
		size, min, max int64
		want           error
	}{
		{3, 0, 1024, nil},
		{0, 0, 0, nil},
		{1024, 0, 1024, nil},
		{1025, 0, 1024, ErrEntityTooLarge},
		{3, 0, 0, ErrEntityTooLarge},
		{511, 512, 1000, ErrEntityTooSmall},
		{512, 512, 1000, nil},
		{1 << 20, 0, 100, ErrEntityTooLarge},
	}
	for _, tc := range tests {
		f := LimitFile(strings.NewReader(strings.Repeat("x", int(tc.size))), tc.min, tc.max)
		buf := make([]byte, 4096)
		var n int64
		var err error
		for i := 0; ; i++ {
			if i > 1<<12 {
				t.Fatalf("size %d in [%d, %d]: no end after %d reads", tc.size, tc.min, tc.max, i)
			}
			var k int
			k, err = f.Read(buf)
			n += int64(k)
			if err != nil {
				break
			}
		}
		if tc.want == nil {
			if err != io.EOF || n != tc.size {
				t.Errorf("size %d in [%d, %d]: read %d, err %v", tc.size, tc.min, tc.max, n, err)
			}
			continue
		}
		if !errors.Is(err, tc.want) || !errors.Is(f.Err, tc.want) {
			t.Errorf("size %d in [%d, %d]: err %v, want %v", tc.size, tc.min, tc.max, err, tc.want)
		}
		if n > tc.max {
			t.Errorf("size %d: %d bytes passed a maximum of %d", tc.size, n, tc.max)
		}
	}
}

// FuzzDecodePolicy: any document decodes to a policy or an InvalidPolicyDocument, and a policy
// it accepts can be checked and has a sane length range.
func FuzzDecodePolicy(f *testing.F) {
	f.Add([]byte(`{"expiration":"2030-01-02T00:00:00Z","conditions":[{"bucket":"b"},["starts-with","$key",""],["eq","$acl","private"],["content-length-range",0,10]]}`))
	f.Add([]byte(`{"expiration":"2030-01-02T00:00:00.000Z","conditions":[{}]}`))
	f.Add([]byte(`{"expiration":"2030-01-02T00:00:00Z","conditions":[["content-length-range","1","2"],["content-length-range",0,1e3]]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		p, err := DecodePolicy(doc)
		if err != nil {
			if !errors.Is(err, ErrInvalidPolicyDocument) {
				t.Fatalf("error of another kind: %v", err)
			}
			return
		}
		if p.HasLengthRange && (p.MinLength < 0 || p.MaxLength < 0) {
			t.Fatalf("length range [%d, %d]", p.MinLength, p.MaxLength)
		}
		fields := Fields{"bucket": "b", "key": "k"}
		for _, c := range p.Conditions {
			fields[c.Field] = c.Value
		}
		err = p.Check(fields, p.Expiration.Add(-time.Second))
		if err != nil && !errors.Is(err, ErrPolicyDenied) {
			t.Fatalf("check: %v", err)
		}
	})
}
