package tagging

import (
	"encoding/xml"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/s3/s3xml"
)

func n(c string, k int) string { return strings.Repeat(c, k) }

func tags(kv ...string) Set {
	var s Set
	for i := 0; i+1 < len(kv); i += 2 {
		s = append(s, Tag{Key: kv[i], Value: kv[i+1]})
	}
	return s
}

func numbered(k int) Set {
	var s Set
	for i := 0; i < k; i++ {
		s = append(s, Tag{Key: fmt.Sprintf("k%d", i), Value: "v"})
	}
	return s
}

// wantRefusal fails unless err is an *Error of the kind and message given ("" for none).
func wantRefusal(t *testing.T, err error, kind error, msg string) {
	t.Helper()
	if kind == nil {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	var te *Error
	if !errors.As(err, &te) || !errors.Is(err, kind) {
		t.Fatalf("got %v, want %v", err, kind)
	}
	if msg != "" && te.Message != msg {
		t.Fatalf("message %q, want %q", te.Message, msg)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  Set
		kind Kind
		err  error
		msg  string
	}{
		{"empty set", nil, Object, nil, ""},
		{"ten object tags", numbered(10), Object, nil, ""},
		{"eleven object tags", numbered(11), Object, ErrTooManyTags, msgTooManyObjectTags},
		{"eleven bucket tags", numbered(11), Bucket, nil, ""},
		{"fifty bucket tags", numbered(50), Bucket, nil, ""},
		{"fifty-one bucket tags", numbered(51), Bucket, ErrTooManyTags, msgTooManyBucketTags},
		{"count before content", append(numbered(10), Tag{Key: "", Value: "v"}), Object, ErrTooManyTags, msgTooManyObjectTags},
		{"key of 128", tags(n("k", 128), "v"), Object, nil, ""},
		{"key of 129", tags(n("k", 129), "v"), Object, ErrInvalidTag, msgInvalidKey},
		{"key of 128 non-ASCII letters", tags(n("é", 128), "v"), Object, nil, ""},
		{"key of 129 non-ASCII letters", tags(n("é", 129), "v"), Object, ErrInvalidTag, msgInvalidKey},
		{"empty key", tags("", "v"), Object, ErrInvalidTag, msgInvalidKey},
		{"value of 256", tags("k", n("v", 256)), Object, nil, ""},
		{"value of 257", tags("k", n("v", 257)), Object, ErrInvalidTag, msgInvalidValue},
		{"empty value", tags("k", ""), Object, nil, ""},
		{"allowed punctuation", tags("a+b-c=d.e_f:g/h@i j", "+-=._:/@ "), Object, nil, ""},
		{"letters and digits of other scripts", tags("日本語", "Ωμέγα٣"), Object, nil, ""},
		{"comma in key", tags("a,b", "v"), Object, ErrInvalidTag, msgInvalidKey},
		{"star in value", tags("k", "a*b"), Object, ErrInvalidTag, msgInvalidValue},
		{"tab in value", tags("k", "a\tb"), Object, ErrInvalidTag, msgInvalidValue},
		{"newline in key", tags("a\nb", "v"), Object, ErrInvalidTag, msgInvalidKey},
		{"emoji in value", tags("k", "😀"), Object, ErrInvalidTag, msgInvalidValue},
		{"invalid UTF-8", tags("k\xff", "v"), Object, ErrInvalidTag, msgInvalidKey},
		{"duplicate keys", tags("a", "1", "a", "2"), Object, ErrInvalidTag, msgDuplicateKey},
		{"keys differing in case", tags("a", "1", "A", "2"), Object, nil, ""},
		{"aws: on an object", tags("aws:cost", "v"), Object, ErrInvalidTag, msgObjectAWSPrefix},
		{"AWS: on an object", tags("AWS:cost", "v"), Object, ErrInvalidTag, msgObjectAWSPrefix},
		{"aws: on a bucket", tags("aws:cloudformation", "v"), Bucket, ErrInvalidTag, msgBucketAWSPrefix},
		{"aws without colon", tags("awsome", "v"), Object, nil, ""},
		{"aws: inside a key", tags("x:aws:y", "v"), Bucket, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantRefusal(t, Validate(tc.set, tc.kind), tc.err, tc.msg)
		})
	}
}

func TestValidateNamesTheKey(t *testing.T) {
	var te *Error
	if err := Validate(tags("a", "1", "a", "2"), Object); !errors.As(err, &te) || te.TagKey != "a" {
		t.Fatalf("%v: TagKey %q", err, te.TagKey)
	}
}

func TestParseHeader(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Set
		err  error
		msg  string
	}{
		{"", nil, nil, ""},
		{"a=1", tags("a", "1"), nil, ""},
		{"a=1&b=2", tags("a", "1", "b", "2"), nil, ""},
		{"b=2&a=1", tags("b", "2", "a", "1"), nil, ""}, // order kept
		{"k", tags("k", ""), nil, ""},
		{"k=", tags("k", ""), nil, ""},
		{"a=1&&b=2&", tags("a", "1", "b", "2"), nil, ""},
		{"my%20key=a%2Fb%3Dc", tags("my key", "a/b=c"), nil, ""},
		{"a+b=c+d", tags("a b", "c d"), nil, ""},
		{"%C3%A9t%C3%A9=%E6%97%A5", tags("été", "日"), nil, ""},
		{"a=1&a=2", nil, ErrInvalidHeader, msgInvalidHeader},
		{"a=b=c", nil, ErrInvalidHeader, msgInvalidHeader},
		{"a=%zz", nil, ErrInvalidHeader, msgInvalidHeader},
		{"Key=string,Value=string", nil, ErrInvalidHeader, msgInvalidHeader},
		{"%5B%7B=1", nil, ErrInvalidTag, msgInvalidKey}, // decodes to "[{"
		{"aws%3Akey=1", nil, ErrInvalidTag, msgObjectAWSPrefix},
		{"=v", nil, ErrInvalidTag, msgInvalidKey},
		{numbered(11).Encode(), nil, ErrTooManyTags, msgTooManyObjectTags},
		{n("k", 129) + "=v", nil, ErrInvalidTag, msgInvalidKey},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseHeader(tc.in)
			wantRefusal(t, err, tc.err, tc.msg)
			if tc.err == nil && !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func doc(inner string) string {
	return `<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` + inner + `</Tagging>`
}

func tagXML(k, v string) string { return "<Tag><Key>" + k + "</Key><Value>" + v + "</Value></Tag>" }

func TestParseXML(t *testing.T) {
	eleven := ""
	for i := 0; i < 11; i++ {
		eleven += tagXML(fmt.Sprint("k", i), "v")
	}
	for _, tc := range []struct {
		name string
		body string
		kind Kind
		want Set
		err  error
		msg  string
	}{
		{"two tags", doc("<TagSet>" + tagXML("a", "1") + tagXML("b", "") + "</TagSet>"), Object, tags("a", "1", "b", ""), nil, ""},
		{"no namespace", "<Tagging><TagSet>" + tagXML("a", "1") + "</TagSet></Tagging>", Object, tags("a", "1"), nil, ""},
		{"empty tag set", doc("<TagSet/>"), Object, Set{}, nil, ""},
		{"escaped text", doc("<TagSet>" + tagXML("a&amp;b", "x") + "</TagSet>"), Object, nil, ErrInvalidTag, msgInvalidKey},
		{"self-closing value", doc("<TagSet><Tag><Key>a</Key><Value/></Tag></TagSet>"), Object, tags("a", ""), nil, ""},
		{"eleven on an object", doc("<TagSet>" + eleven + "</TagSet>"), Object, nil, ErrTooManyTags, msgTooManyObjectTags},
		{"eleven on a bucket", doc("<TagSet>" + eleven + "</TagSet>"), Bucket, nil, nil, ""},
		{"duplicate", doc("<TagSet>" + tagXML("a", "1") + tagXML("a", "2") + "</TagSet>"), Object, nil, ErrInvalidTag, msgDuplicateKey},
		{"aws: on a bucket", doc("<TagSet>" + tagXML("aws:x", "1") + "</TagSet>"), Bucket, nil, ErrInvalidTag, msgBucketAWSPrefix},
		{"no TagSet", doc(""), Object, nil, ErrMalformedXML, msgMalformedXML},
		{"no Value", doc("<TagSet><Tag><Key>a</Key></Tag></TagSet>"), Object, nil, ErrMalformedXML, ""},
		{"no Key", doc("<TagSet><Tag><Value>a</Value></Tag></TagSet>"), Object, nil, ErrMalformedXML, ""},
		{"unterminated", "<Tagging><TagSet>", Object, nil, ErrMalformedXML, ""},
		{"empty body", "", Object, nil, ErrMalformedXML, ""},
		{"other root", "<Foo><TagSet/></Foo>", Object, nil, ErrMalformedXML, ""},
		{"trailing element", doc("<TagSet/>") + "<x/>", Object, nil, ErrMalformedXML, ""},
		{"not XML", "a=1", Object, nil, ErrMalformedXML, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseXML([]byte(tc.body), tc.kind)
			wantRefusal(t, err, tc.err, tc.msg)
			if tc.err == nil && tc.want != nil && !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEncodeDecode(t *testing.T) {
	for _, s := range []Set{nil, tags("a", "1"), tags("my key", "a/b=c&d", "é", "", "+", "@")} {
		enc := s.Encode()
		got, err := Decode(enc)
		if err != nil {
			t.Fatalf("%q: %v", enc, err)
		}
		if len(s) == 0 && len(got) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("%q decodes to %q, want %q", enc, got, s)
		}
	}
	if _, err := Decode("a=%zz"); err == nil {
		t.Fatal("a damaged stored set decoded")
	}
}

func TestDocumentAlwaysHasTagSet(t *testing.T) {
	b, err := xml.Marshal(Set(nil).Document())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "<TagSet></TagSet>") {
		t.Fatalf("empty set: %s", b)
	}
	b, _ = xml.Marshal(tags("k", "v").Document())
	var back s3xml.Tagging
	if err := xml.Unmarshal(b, &back); err != nil || len(back.TagSet.Tags) != 1 || back.TagSet.Tags[0] != (s3xml.Tag{Key: "k", Value: "v"}) {
		t.Fatalf("%s: %+v %v", b, back, err)
	}
}

// FuzzParse: whatever a client sends as a header or a document, the parsers either refuse it
// with one of the package's errors or return a set that passes Validate and survives the
// stored form unchanged.
func FuzzParse(f *testing.F) {
	f.Add("a=1&b=2", []byte(doc("<TagSet>"+tagXML("a", "1")+"</TagSet>")))
	f.Add("a=1&a=2", []byte(doc("<TagSet>"+tagXML("a", "1")+tagXML("a", "2")+"</TagSet>")))
	f.Add("%zz=b=c", []byte("<Tagging><TagSet><Tag><Key/></Tag></TagSet></Tagging>"))
	f.Add("my+key=%E6%97%A5&k", []byte(doc("<TagSet/>")))
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		check := func(what string, s Set, err error, k Kind) {
			if err != nil {
				var te *Error
				if !errors.As(err, &te) || te.Message == "" {
					t.Fatalf("%s: refusal %v is not a tagging.Error", what, err)
				}
				return
			}
			if verr := Validate(s, k); verr != nil {
				t.Fatalf("%s: accepted %q that Validate refuses: %v", what, s, verr)
			}
			back, derr := Decode(s.Encode())
			if derr != nil || len(back) != len(s) || (len(s) > 0 && !reflect.DeepEqual(back, s)) {
				t.Fatalf("%s: %q stored as %q reads back %q (%v)", what, s, s.Encode(), back, derr)
			}
		}
		s, err := ParseHeader(header)
		check("header", s, err, Object)
		for _, k := range []Kind{Object, Bucket} {
			s, err = ParseXML(body, k)
			check("document", s, err, k)
		}
	})
}
