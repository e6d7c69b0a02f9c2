package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/cairn-store/cairn/internal/objclient"
)

// defaultEndpoint mirrors the server's default address without importing the server: the
// client and bench commands reach a store from the outside, as any other client would.
const defaultEndpoint = "http://127.0.0.1:8787"

// connFlags say how to reach and authenticate to a store, over S3 or Swift. Every command
// that talks to a store (put, get, ls, rm, mb, rb, bench) registers the same flags, so that
// one set of CAIRN_* environment variables serves them all.
type connFlags struct {
	cfg     objclient.Config
	profile string // an AWS profile to read keys, region and endpoint from (awsconfig.go)
}

func (f *connFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.cfg.Protocol, "protocol", objclient.ProtocolS3, "protocol: s3 or swift")
	fs.StringVar(&f.cfg.Endpoint, "endpoint", defaultEndpoint, "S3 endpoint URL (path-style requests)")
	fs.StringVar(&f.cfg.AccessKey, "access-key", "", "S3 access key")
	fs.StringVar(&f.cfg.SecretKey, "secret-key", "", "S3 secret key")
	fs.StringVar(&f.cfg.Region, "region", objclient.DefaultRegion, "S3 region used in the signature")
	fs.StringVar(&f.cfg.AuthURL, "auth-url", "", "Swift v1 auth URL (http://host:port/auth/v1.0), with --user and --key")
	fs.StringVar(&f.cfg.User, "user", "", "Swift user (account:user)")
	fs.StringVar(&f.cfg.Key, "key", "", "Swift key")
	fs.StringVar(&f.cfg.Token, "token", "", "Swift token, with --storage-url, instead of --auth-url/--user/--key")
	fs.StringVar(&f.cfg.StorageURL, "storage-url", "", "Swift storage URL (http://host:port/v1/AUTH_account), with --token")
	fs.StringVar(&f.profile, "profile", "", "an AWS profile (~/.aws/credentials, ~/.aws/config) for what flags and CAIRN_* do not give (default: AWS_PROFILE, else default)")
}

// open validates the flags and builds a client with one kept-alive connection per worker. It
// makes no request: callers follow it with Check, which turns a wrong endpoint or key into one
// clear line. The context is for a client that must authenticate before it can be built; none
// has to yet (Swift authenticates on the first request).
func (f *connFlags) open(_ context.Context, concurrency int) (objclient.Client, error) {
	cfg := f.cfg
	cfg.Concurrency = concurrency
	return objclient.New(cfg)
}
