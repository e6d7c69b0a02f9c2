package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain keeps the developer's own AWS setup out of the tests: the commands read it for what
// flags and CAIRN_* variables do not give (awsconfig.go).
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cairn-cmd-test-")
	if err != nil {
		panic(err)
	}
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE"} {
		os.Unsetenv(k)
	}
	os.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "no-credentials"))
	os.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "no-config"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
