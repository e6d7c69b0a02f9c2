package swiftwire

import "testing"

func TestRemapDomain(t *testing.T) {
	domains := []string{"example.net"}
	for _, tc := range []struct {
		host, path, want string
		remapped, bad    bool
	}{
		{host: "AUTH_test.example.net", path: "/", want: "/v1/AUTH_test/", remapped: true},
		{host: "auth-test.example.net:8080", path: "/c/o", want: "/v1/AUTH_test/c/o", remapped: true},
		{host: "cont.AUTH_test.example.net", path: "/dir/obj", want: "/v1/AUTH_test/cont/dir/obj", remapped: true},
		{host: "cont.AUTH-test.example.net", path: "//v1", want: "/v1/AUTH_test/cont//v1", remapped: true},
		{host: "AUTH_Mixed.EXAMPLE.NET", path: "/", want: "/v1/AUTH_Mixed/", remapped: true},
		{host: "bucket.example.net", path: "/k"},    // no reseller prefix: left alone (S3 may own it)
		{host: "example.net", path: "/x"},           // the domain itself
		{host: "AUTH_test.example.org", path: "/x"}, // another domain
		{host: "a.b.AUTH_test.example.net", path: "/", bad: true},
	} {
		got, remapped, err := RemapDomain(tc.host, tc.path, domains)
		if (err != nil) != tc.bad || remapped != tc.remapped || got != tc.want {
			t.Errorf("RemapDomain(%q, %q) = %q, %v, %v; want %q, %v, bad %v", tc.host, tc.path, got, remapped, err, tc.want, tc.remapped, tc.bad)
		}
	}
}
