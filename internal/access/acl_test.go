package access

import (
	"errors"
	"reflect"
	"testing"
)

func TestCannedACL(t *testing.T) {
	cases := []struct {
		name      string
		forObject bool
		want      []Grant
		err       error
	}{
		{"private", false, nil, nil},
		{"public-read", false, []Grant{{Grantee{URI: AllUsersURI}, Read}}, nil},
		{"public-read-write", false, []Grant{{Grantee{URI: AllUsersURI}, Read}, {Grantee{URI: AllUsersURI}, Write}}, nil},
		{"authenticated-read", true, []Grant{{Grantee{URI: AuthenticatedUsersURI}, Read}}, nil},
		{"bucket-owner-read", true, nil, nil},
		{"bucket-owner-full-control", true, nil, nil},
		{"bucket-owner-read", false, nil, ErrInvalidACL},
		{"bucket-owner-full-control", false, nil, ErrInvalidACL},
		{"aws-exec-read", false, nil, ErrUnsupported},
		{"log-delivery-write", false, nil, ErrUnsupported},
		{"Public-Read", false, nil, ErrInvalidACL},
		{"", false, nil, ErrInvalidACL},
		{"public", true, nil, ErrInvalidACL},
	}
	for _, c := range cases {
		a, err := CannedACL(c.name, c.forObject)
		if !errors.Is(err, c.err) || (c.err == nil && err != nil) {
			t.Errorf("CannedACL(%q, %v): error %v, want %v", c.name, c.forObject, err, c.err)
			continue
		}
		if err == nil && !reflect.DeepEqual(a.Grants, c.want) {
			t.Errorf("CannedACL(%q): %+v, want %+v", c.name, a.Grants, c.want)
		}
	}
}

func TestACLValidate(t *testing.T) {
	cases := []struct {
		g   Grant
		err error
	}{
		{Grant{Grantee{ID: "acme"}, Read}, nil},
		{Grant{Grantee{URI: AllUsersURI}, FullControl}, nil},
		{Grant{Grantee{URI: AuthenticatedUsersURI}, WriteACP}, nil},
		{Grant{Grantee{ID: "acme"}, "READ_WRITE"}, ErrInvalidACL},
		{Grant{Grantee{ID: "acme"}, ""}, ErrInvalidACL},
		{Grant{Grantee{ID: "not valid"}, Read}, ErrInvalidACL},
		{Grant{Grantee{ID: "acme:bob"}, Read}, ErrInvalidACL},
		{Grant{Grantee{ID: "acme", URI: AllUsersURI}, Read}, ErrInvalidACL},
		{Grant{Grantee{URI: "http://acs.amazonaws.com/groups/global/Everyone"}, Read}, ErrInvalidACL},
		{Grant{Grantee{URI: "http://acs.amazonaws.com/groups/s3/LogDelivery"}, Write}, ErrUnsupported},
		{Grant{Grantee{}, Read}, ErrInvalidACL},
	}
	for _, c := range cases {
		err := ACL{Grants: []Grant{c.g}}.Validate()
		if !errors.Is(err, c.err) || (c.err == nil && err != nil) {
			t.Errorf("Validate(%+v): %v, want %v", c.g, err, c.err)
		}
	}
}

func TestACLEncoding(t *testing.T) {
	if (ACL{}).Encode() != "" {
		t.Error("private encodes as something")
	}
	a, err := DecodeACL("")
	if err != nil || len(a.Grants) != 0 {
		t.Errorf("DecodeACL(\"\"): %v %v", a, err)
	}
	in := ACL{Grants: []Grant{{Grantee{ID: "other"}, Read}, {Grantee{URI: AllUsersURI}, Write}, {Grantee{ID: "x_y-z"}, FullControl}}}
	enc := in.Encode()
	out, err := DecodeACL(enc)
	if err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip of %s: %+v %v", enc, out, err)
	}
	for _, bad := range []string{"{", `[{"grantee":{"id":"a b"},"permission":"READ"}]`, `[{"grantee":{"id":"a"},"permission":"ALL"}]`, `"x"`} {
		if _, err := DecodeACL(bad); !errors.Is(err, ErrInvalidACL) {
			t.Errorf("DecodeACL(%s): %v", bad, err)
		}
	}
	if !in.Public() || (ACL{Grants: []Grant{{Grantee{URI: AuthenticatedUsersURI}, Read}}}).Public() {
		t.Error("Public")
	}
	if p, err := ParsePermission("WRITE_ACP"); err != nil || p != WriteACP {
		t.Error(p, err)
	}
}

func TestObjectACLFromSysMeta(t *testing.T) {
	pub, _ := CannedACL(CannedPublicRead, true)
	if got := ObjectACLFromSysMeta(map[string]string{ObjectMetaACL: pub.Encode()}); !reflect.DeepEqual(*got, pub) {
		t.Errorf("%+v", got)
	}
	if got := ObjectACLFromSysMeta(nil); len(got.Grants) != 0 {
		t.Errorf("%+v", got)
	}
	if got := ObjectACLFromSysMeta(map[string]string{ObjectMetaACL: "garbage"}); len(got.Grants) != 0 {
		t.Errorf("garbage grants %+v", got)
	}
}
