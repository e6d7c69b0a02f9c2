package s3core

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
)

func TestParseGrantHeader(t *testing.T) {
	cases := []struct {
		v    string
		want []access.Grant
		err  *APIError
	}{
		{`id="beta"`, []access.Grant{{Grantee: access.Grantee{ID: "beta"}, Permission: access.Read}}, nil},
		{`id=beta, uri="http://acs.amazonaws.com/groups/global/AllUsers"`, []access.Grant{
			{Grantee: access.Grantee{ID: "beta"}, Permission: access.Read},
			{Grantee: access.Grantee{URI: access.AllUsersURI}, Permission: access.Read}}, nil},
		{` ID="gamma" ,`, []access.Grant{{Grantee: access.Grantee{ID: "gamma"}, Permission: access.Read}}, nil},
		{`emailAddress="a@example.com"`, nil, errUnresolvableByEmail},
		{`id="beta", emailAddress="a@example.com"`, nil, errUnresolvableByEmail},
		{`uri="http://acs.amazonaws.com/groups/s3/LogDelivery"`, nil, ErrNotImplemented},
		{`uri="http://example.com/everyone"`, nil, ErrInvalidArgument},
		{`id="not an account"`, nil, ErrInvalidArgument},
		{`id=`, nil, ErrInvalidArgument},
		{`beta`, nil, ErrInvalidArgument},
		{`arn="x"`, nil, ErrInvalidArgument},
	}
	for _, c := range cases {
		got, err := parseGrantHeader(access.Read, c.v)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%q: %v, want %s", c.v, err, c.err.Code)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %+v %v", c.v, got, err)
		}
	}
}

func TestParseACLDocument(t *testing.T) {
	doc := func(owner, grants string) []byte {
		return []byte(`<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>` + owner +
			`</ID></Owner><AccessControlList>` + grants + `</AccessControlList></AccessControlPolicy>`)
	}
	user := func(id, perm string) string {
		return `<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>` + id +
			`</ID></Grantee><Permission>` + perm + `</Permission></Grant>`
	}
	group := func(uri, perm string) string {
		return `<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group"><URI>` + uri +
			`</URI></Grantee><Permission>` + perm + `</Permission></Grant>`
	}
	acl, err := parseACLDocument(doc("alpha", user("alpha", "FULL_CONTROL")+user("beta", "READ")+group(access.AllUsersURI, "READ")), "alpha")
	if err != nil {
		t.Fatal(err)
	}
	want := []access.Grant{{Grantee: access.Grantee{ID: "beta"}, Permission: access.Read}, {Grantee: access.Grantee{URI: access.AllUsersURI}, Permission: access.Read}}
	if !reflect.DeepEqual(acl.Grants, want) {
		t.Fatalf("%+v", acl.Grants)
	}
	// An undeclared xsi prefix, as some clients send, still names the type.
	loose := []byte(`<AccessControlPolicy><Owner><ID>alpha</ID></Owner><AccessControlList><Grant><Grantee xsi:type="CanonicalUser"><ID>beta</ID></Grantee><Permission>WRITE</Permission></Grant></AccessControlList></AccessControlPolicy>`)
	if acl, err := parseACLDocument(loose, "alpha"); err != nil || len(acl.Grants) != 1 || acl.Grants[0].Permission != access.Write {
		t.Fatalf("loose document: %+v %v", acl, err)
	}
	// The owner alone: private.
	if acl, err := parseACLDocument(doc("alpha", user("alpha", "FULL_CONTROL")), "alpha"); err != nil || len(acl.Grants) != 0 {
		t.Fatalf("owner only: %+v %v", acl, err)
	}
	for _, c := range []struct {
		body []byte
		err  *APIError
	}{
		{[]byte(`<AccessControlPolicy/>`), errMalformedACL},
		{[]byte(`not xml`), errMalformedACL},
		{[]byte(`<AccessControlPolicy><AccessControlList/></AccessControlPolicy>`), errMalformedACL},
		{doc("beta", ""), ErrInvalidArgument},
		{doc("alpha", user("beta", "READ_WRITE")), errMalformedACL},
		{doc("alpha", `<Grant><Permission>READ</Permission></Grant>`), errMalformedACL},
		{doc("alpha", strings.Replace(user("beta", "READ"), "CanonicalUser", "Nobody", 1)), errMalformedACL},
		{doc("alpha", strings.Replace(user("beta", "READ"), `xsi:type="CanonicalUser"`, "", 1)), errMalformedACL},
		{doc("alpha", `<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="AmazonCustomerByEmail"><EmailAddress>a@b</EmailAddress></Grantee><Permission>READ</Permission></Grant>`), errUnresolvableByEmail},
		{doc("alpha", user("not valid", "READ")), ErrInvalidArgument},
		{doc("alpha", group("http://acs.amazonaws.com/groups/s3/LogDelivery", "WRITE")), ErrNotImplemented},
	} {
		if _, err := parseACLDocument(c.body, "alpha"); !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want %s", c.body, err, c.err.Code)
		}
	}
}

func TestAnonymousAuth(t *testing.T) {
	for _, c := range []struct {
		sha  string
		mode sigv4.PayloadMode
		err  bool
	}{
		{"", sigv4.PayloadUnsigned, false},
		{"UNSIGNED-PAYLOAD", sigv4.PayloadUnsigned, false},
		{strings.Repeat("ab", 32), sigv4.PayloadSigned, false},
		{strings.Repeat("AB", 32), 0, true},
		{"STREAMING-UNSIGNED-PAYLOAD-TRAILER", 0, true},
		{"nonsense", 0, true},
	} {
		r, _ := http.NewRequest("PUT", "http://x/b/k", nil)
		if c.sha != "" {
			r.Header.Set("X-Amz-Content-Sha256", c.sha)
		}
		a, err := AnonymousAuth(r)
		if (err != nil) != c.err || (err == nil && (a.Payload != c.mode || a.DecodedContentLength != -1)) {
			t.Errorf("%q: %+v %v", c.sha, a, err)
		}
	}
}
