// Package testserver owns starting a real Cairn (storage, proxy, S3 front end) inside a test
// process, for the tests of packages that reach a store from the outside (the bench, the
// outbound client, the transfer client) and may not import the server themselves.
package testserver

import (
	"context"
	"testing"

	"github.com/cairn-store/cairn/internal/server"
)

// Start runs a Cairn on a free loopback port with a fresh data directory and the given root
// key, stopped (and checked for a clean shutdown) when the test ends. It returns the endpoint.
func Start(t testing.TB, accessKey, secretKey string) string {
	t.Helper()
	return StartConfig(t, server.Config{RootAccessKey: accessKey, RootSecretKey: secretKey})
}

// StartConfig is Start with more of the server's configuration: its data directory and listen
// address are the test's own.
func StartConfig(t testing.TB, cfg server.Config) string {
	t.Helper()
	cfg.DataDir, cfg.Listen = t.TempDir(), "127.0.0.1:0"
	s, err := server.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	return s.Endpoint()
}
