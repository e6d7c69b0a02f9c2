package objclient

import (
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string // substring of the error; "" for none
	}{
		{Config{Endpoint: "http://h:1", AccessKey: "a", SecretKey: "s"}, ""},
		{Config{Protocol: "s3", Endpoint: "https://h/base/", AccessKey: "a", SecretKey: "s"}, ""},
		{Config{AccessKey: "a", SecretKey: "s"}, "--endpoint"},
		{Config{Endpoint: "h:1", AccessKey: "a", SecretKey: "s"}, "--endpoint"},
		{Config{Endpoint: "ftp://h", AccessKey: "a", SecretKey: "s"}, "--endpoint"},
		{Config{Endpoint: "http://h:1/?x=1", AccessKey: "a", SecretKey: "s"}, "query"},
		{Config{Endpoint: "http://u:p@h:1", AccessKey: "a", SecretKey: "s"}, "credentials"},
		{Config{Endpoint: "http://h:1", SecretKey: "s"}, "--access-key"},
		{Config{Endpoint: "http://h:1", AccessKey: "a"}, "--secret-key"},
		{Config{Endpoint: "http://h:1", AccessKey: "a", SecretKey: "s", Concurrency: -1}, "concurrency"},
		{Config{Endpoint: "http://h:1", AccessKey: "a", SecretKey: "s", Timeout: -time.Second}, "timeout"},
		{Config{Protocol: "ftp"}, "--protocol"},

		{Config{Protocol: "swift", AuthURL: "http://h/auth/v1.0", User: "a:u", Key: "k"}, ""},
		{Config{Protocol: "swift", Token: "t", StorageURL: "http://h/v1/AUTH_a"}, ""},
		{Config{Protocol: "swift"}, "--auth-url"},
		{Config{Protocol: "swift", User: "a:u", Key: "k"}, "--auth-url"},
		{Config{Protocol: "swift", AuthURL: "http://h/auth/v1.0", Key: "k"}, "--user"},
		{Config{Protocol: "swift", AuthURL: "http://h/auth/v1.0", User: "a:u"}, "--key"},
		{Config{Protocol: "swift", AuthURL: "nohost", User: "a:u", Key: "k"}, "--auth-url"},
		{Config{Protocol: "swift", Token: "t"}, "--storage-url"},
		{Config{Protocol: "swift", StorageURL: "http://h/v1/AUTH_a"}, "--token"},
		{Config{Protocol: "swift", Token: "t", StorageURL: "/v1/AUTH_a"}, "--storage-url"},
		{Config{Protocol: "swift", Token: "t", StorageURL: "http://h/v1/AUTH_a", AuthURL: "http://h/auth/v1.0"}, "not both"},
	} {
		cfg := tc.cfg
		err := cfg.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.cfg, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: %v, want an error naming %q", tc.cfg, err, tc.want)
		case err == nil:
			if cfg.Concurrency != DefaultConcurrency || cfg.Timeout != DefaultTimeout ||
				(cfg.Protocol == ProtocolS3 && cfg.Region != DefaultRegion) {
				t.Errorf("%+v: defaults not filled: %+v", tc.cfg, cfg)
			}
		}
	}
	// New validates a copy: the caller's Config is left as it was.
	cfg := Config{Endpoint: "http://h:1", AccessKey: "a", SecretKey: "s"}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if cfg.Protocol != "" || c.Protocol() != ProtocolS3 || c.Endpoint() != "http://h:1" {
		t.Errorf("config %+v, client %s %s", cfg, c.Protocol(), c.Endpoint())
	}
}
