package cors

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func doc(rules ...string) string {
	return `<CORSConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` + strings.Join(rules, "") + `</CORSConfiguration>`
}

func rule(inner string) string { return "<CORSRule>" + inner + "</CORSRule>" }

const minimal = "<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"

func TestParseValidation(t *testing.T) {
	many := make([]string, MaxRules+1)
	for i := range many {
		many[i] = rule(minimal)
	}
	for _, tc := range []struct {
		name string
		body string
		kind Kind   // 0: accepted
		msg  string // part of the message, for InvalidRequest and InvalidArgument
	}{
		{"minimal", doc(rule(minimal)), 0, ""},
		{"every member", doc(rule("<ID>r1</ID><AllowedHeader>x-amz-*</AllowedHeader><AllowedMethod>PUT</AllowedMethod><AllowedMethod>POST</AllowedMethod><AllowedOrigin>https://*.example.com</AllowedOrigin><ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>3000</MaxAgeSeconds>")), 0, ""},
		{"no namespace", `<CORSConfiguration>` + rule(minimal) + `</CORSConfiguration>`, 0, ""},
		{"100 rules", doc(many[:MaxRules]...), 0, ""},
		{"empty origin", doc(rule("<AllowedOrigin></AllowedOrigin><AllowedMethod>GET</AllowedMethod>")), 0, ""},
		{"101 rules", doc(many...), Malformed, ""},
		{"no rules", doc(), Malformed, ""},
		{"not XML", "{}", Malformed, ""},
		{"another root", `<CORSRules>` + rule(minimal) + `</CORSRules>`, Malformed, ""},
		{"trailing garbage", doc(rule(minimal)) + "<x/>", Malformed, ""},
		{"empty rule", doc("<CORSRule/>"), Malformed, ""},
		{"no origin", doc(rule("<AllowedMethod>GET</AllowedMethod>")), Malformed, ""},
		{"no method", doc(rule("<AllowedOrigin>*</AllowedOrigin>")), Malformed, ""},
		{"two IDs", doc(rule(minimal + "<ID>a</ID><ID>b</ID>")), Malformed, ""},
		{"two max ages", doc(rule(minimal + "<MaxAgeSeconds>1</MaxAgeSeconds><MaxAgeSeconds>2</MaxAgeSeconds>")), Malformed, ""},
		{"max age not a number", doc(rule(minimal + "<MaxAgeSeconds>soon</MaxAgeSeconds>")), Malformed, ""},
		{"unknown element", doc(rule(minimal + "<AllowedMethods>GET</AllowedMethods>")), Malformed, ""},
		{"unknown top element", doc(rule(minimal), "<Rule/>"), Malformed, ""},
		{"method PATCH", doc(rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod>")), InvalidRequest, "Found unsupported HTTP method in CORS config. Unsupported method is PATCH"},
		{"method OPTIONS", doc(rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>OPTIONS</AllowedMethod>")), InvalidRequest, "Unsupported method is OPTIONS"},
		{"method lower case", doc(rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>get</AllowedMethod>")), InvalidRequest, "Unsupported method is get"},
		{"method empty", doc(rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod></AllowedMethod>")), InvalidRequest, "Unsupported method is "},
		{"two wildcards in an origin", doc(rule("<AllowedOrigin>*example*.com</AllowedOrigin><AllowedMethod>GET</AllowedMethod>")), InvalidRequest, `AllowedOrigin "*example*.com" can not have more than one wildcard.`},
		{"two wildcards in a header", doc(rule(minimal + "<AllowedHeader>x-*-*</AllowedHeader>")), InvalidRequest, `AllowedHeader "x-*-*" can not have more than one wildcard.`},
		{"wildcard in an exposed header", doc(rule(minimal + "<ExposeHeader>x-amz-*</ExposeHeader>")), InvalidRequest, `ExposeHeader "x-amz-*" contains wildcard.`},
		{"ID of 255", doc(rule(minimal + "<ID>" + strings.Repeat("i", 255) + "</ID>")), 0, ""},
		{"ID of 256", doc(rule(minimal + "<ID>" + strings.Repeat("i", 256) + "</ID>")), InvalidArgument, "longer than 255"},
		{"negative max age", doc(rule(minimal + "<MaxAgeSeconds>-1</MaxAgeSeconds>")), InvalidArgument, "negative"},
		// Structure first: a bad method in rule 1 and a missing origin in rule 2 is MalformedXML.
		{"structure before values", doc(rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod>"), rule("<AllowedMethod>GET</AllowedMethod>")), Malformed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.body))
			if tc.kind == 0 {
				if err != nil || cfg == nil || len(cfg.Rules) == 0 {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("want a refusal of kind %d, got %v (%+v)", tc.kind, err, cfg)
			}
			if e.Kind != tc.kind || !strings.Contains(e.Message, tc.msg) {
				t.Fatalf("got kind %d %q, want kind %d containing %q", e.Kind, e.Message, tc.kind, tc.msg)
			}
		})
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	body := doc(
		rule("<ID>first</ID><AllowedOrigin>https://a.example</AllowedOrigin><AllowedOrigin>https://*.b.example</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedMethod>HEAD</AllowedMethod><AllowedHeader>*</AllowedHeader><ExposeHeader>ETag</ExposeHeader><ExposeHeader>x-amz-request-id</ExposeHeader><MaxAgeSeconds>0</MaxAgeSeconds>"),
		rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>PUT</AllowedMethod>"))
	cfg, err := Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(cfg.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, back) {
		t.Fatalf("round trip:\n%+v\n%+v", cfg, back)
	}
	if cfg.Rules[0].MaxAgeSeconds == nil || *cfg.Rules[0].MaxAgeSeconds != 0 || cfg.Rules[1].MaxAgeSeconds != nil {
		t.Fatal("MaxAgeSeconds 0 must stay set, an absent one absent")
	}
	if !strings.Contains(cfg.Encode(), "<ID>first</ID>") || strings.Count(cfg.Encode(), "<ID>") != 1 {
		t.Fatalf("only the members given come back: %s", cfg.Encode())
	}
	if c, err := Decode(""); c != nil || err != nil {
		t.Fatalf("empty: %v %v", c, err)
	}
	if _, err := Decode("<garbage"); err == nil {
		t.Fatal("a stored value that does not parse must be an error")
	}
}

func TestWildcardMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "anything", true},
		{"", "", true},
		{"", "a", false},
		{"exact", "exact", true},
		{"exact", "exact2", false},
		{"exact", "Exact", false},
		{"*suffix", "foo.suffix", true},
		{"*suffix", "suffix", true},
		{"*suffix", "foo.suffix.get", false},
		{"start*end", "startend", true},
		{"start*end", "start12end", true},
		{"start*end", "0start12end", false},
		{"start*end", "start12end0", false},
		{"start*end", "startenend", true},
		{"prefix*", "prefix", true},
		{"prefix*", "prefix.suffix", true},
		{"prefix*", "bla.prefix", false},
		{"http://*.example.com", "http://a.b.example.com", true},
		{"http://*.example.com", "https://a.example.com", false},
		{"http://*.example.com", "http://example.com", false},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXc", false},
		{"*.put", "foo.put", true},
		{"*.put", "foo.suffix", false},
	} {
		if got := wildcardMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("wildcardMatch(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

// s3Tests is the configuration of s3-tests' test_cors_origin_response.
func s3Tests(t *testing.T) *Config {
	t.Helper()
	cfg, err := Parse([]byte(doc(
		rule("<AllowedMethod>GET</AllowedMethod><AllowedOrigin>*suffix</AllowedOrigin>"),
		rule("<AllowedMethod>GET</AllowedMethod><AllowedOrigin>start*end</AllowedOrigin>"),
		rule("<AllowedMethod>GET</AllowedMethod><AllowedOrigin>prefix*</AllowedOrigin>"),
		rule("<AllowedMethod>PUT</AllowedMethod><AllowedOrigin>*.put</AllowedOrigin>"),
		rule("<ID>headers</ID><AllowedMethod>DELETE</AllowedMethod><AllowedOrigin>https://app.example</AllowedOrigin><AllowedHeader>x-amz-*</AllowedHeader><AllowedHeader>Content-Type</AllowedHeader>"),
	)))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestMatch(t *testing.T) {
	cfg := s3Tests(t)
	for _, tc := range []struct {
		origin, method string
		headers        []string
		want           int // index of the rule, -1: none
	}{
		{"foo.suffix", "GET", nil, 0},
		{"foo.bar", "GET", nil, -1},
		{"foo.suffix.get", "GET", nil, -1},
		{"startend", "GET", nil, 1},
		{"start12end", "GET", nil, 1},
		{"0start12end", "GET", nil, -1},
		{"prefix", "GET", nil, 2},
		{"prefix.suffix", "GET", nil, 0}, // the first rule that matches
		{"bla.prefix", "GET", nil, -1},
		{"foo.put", "GET", nil, -1},
		{"foo.put", "PUT", nil, 3},
		{"foo.suffix", "PUT", nil, -1},
		{"foo.suffix", "get", nil, -1}, // methods are case-sensitive
		{"", "GET", nil, -1},
		{"https://app.example", "DELETE", []string{"x-amz-date", "content-type"}, 4},
		{"https://app.example", "DELETE", []string{"x-amz-date", "authorization"}, -1},
		{"https://app.example", "DELETE", nil, 4},
		{"foo.suffix", "GET", []string{"x-amz-meta-header2"}, -1}, // no AllowedHeader allows no header
	} {
		got := cfg.Match(tc.origin, tc.method, tc.headers)
		want := (*Rule)(nil)
		if tc.want >= 0 {
			want = &cfg.Rules[tc.want]
		}
		if got != want {
			t.Errorf("Match(%q, %q, %q) = %+v, want rule %d", tc.origin, tc.method, tc.headers, got, tc.want)
		}
	}
	var none *Config
	if none.Match("a", "GET", nil) != nil {
		t.Error("a nil configuration matches nothing")
	}
}

func TestSetHeaders(t *testing.T) {
	age := 3000
	for _, tc := range []struct {
		name      string
		rule      Rule
		requested []string
		want      map[string]string
	}{
		{"named origin", Rule{AllowedOrigins: []string{"https://a.example"}, AllowedMethods: []string{"GET", "PUT"}, MaxAgeSeconds: &age},
			nil, map[string]string{
				"Access-Control-Allow-Origin": "https://a.example", "Access-Control-Allow-Credentials": "true",
				"Access-Control-Allow-Methods": "GET, PUT", "Access-Control-Max-Age": "3000", "Vary": Vary,
			}},
		{"any origin", Rule{AllowedOrigins: []string{"*"}, AllowedMethods: []string{"GET"}, ExposeHeaders: []string{"ETag", "x-amz-meta-header1"}},
			[]string{"x-amz-date", "content-type"}, map[string]string{
				"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET",
				"Access-Control-Allow-Headers": "x-amz-date, content-type", "Access-Control-Expose-Headers": "ETag, x-amz-meta-header1", "Vary": Vary,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			tc.rule.SetHeaders(h, "https://a.example", tc.requested)
			if len(h) != len(tc.want) {
				t.Errorf("headers %v, want %v", h, tc.want)
			}
			for k, v := range tc.want {
				if h.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, h.Get(k), v)
				}
			}
		})
	}
}

func TestRequestHeaders(t *testing.T) {
	got := RequestHeaders([]string{"X-Amz-Date,content-type", " Authorization ,, x-amz-date", ""})
	want := []string{"x-amz-date", "content-type", "authorization"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
	if RequestHeaders(nil) != nil {
		t.Fatal("none asked: nil")
	}
}

// FuzzParse: the parser never panics; what it accepts encodes to a document it accepts again,
// unchanged, and matching against it never panics.
func FuzzParse(f *testing.F) {
	f.Add([]byte(doc(rule(minimal))))
	f.Add([]byte(doc(rule("<ID>x</ID><AllowedHeader>*</AllowedHeader><AllowedMethod>PUT</AllowedMethod><AllowedOrigin>a*b</AllowedOrigin><ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>5</MaxAgeSeconds>"))))
	f.Add([]byte(doc()))
	f.Add([]byte("<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin></CORSRule></CORSConfiguration>"))
	f.Add([]byte("<a"))
	f.Fuzz(func(t *testing.T, body []byte) {
		cfg, err := Parse(body)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Kind < Malformed || e.Kind > InvalidArgument {
				t.Fatalf("refusal of no kind: %v", err)
			}
			return
		}
		if len(cfg.Rules) == 0 || len(cfg.Rules) > MaxRules {
			t.Fatalf("accepted %d rules", len(cfg.Rules))
		}
		back, err := Decode(cfg.Encode())
		if err != nil {
			t.Fatalf("re-encoded configuration refused: %v\n%s", err, cfg.Encode())
		}
		if !reflect.DeepEqual(back, cfg) {
			t.Fatalf("round trip changed the configuration:\n%+v\n%+v", cfg, back)
		}
		for _, r := range cfg.Rules {
			for _, o := range r.AllowedOrigins {
				if m := cfg.Match(o, r.AllowedMethods[0], nil); m == nil {
					t.Fatalf("origin %q of a rule matches no rule", o)
				}
			}
		}
	})
}
