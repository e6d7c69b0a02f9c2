package objclient

import (
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Defaults that Validate fills in.
const (
	DefaultRegion      = "us-east-1"
	DefaultConcurrency = 16
	DefaultTimeout     = 2 * time.Minute
)

// Validate checks the configuration and fills in defaults. Its messages name the command-line
// flags, because a wrong flag is what a user will have to fix.
func (c *Config) Validate() error {
	if c.Protocol == "" {
		c.Protocol = ProtocolS3
	}
	switch c.Protocol {
	case ProtocolS3:
		if c.Endpoint == "" {
			return errors.New("objclient: s3 needs --endpoint (http://host:port)")
		}
		if err := checkBaseURL("--endpoint", c.Endpoint); err != nil {
			return err
		}
		if c.AccessKey == "" {
			return errors.New("objclient: s3 needs --access-key")
		}
		if c.SecretKey == "" {
			return errors.New("objclient: s3 needs --secret-key")
		}
		if c.Region == "" {
			c.Region = DefaultRegion
		}
	case ProtocolSwift:
		v1 := c.AuthURL != "" || c.User != "" || c.Key != ""
		pre := c.Token != "" || c.StorageURL != ""
		switch {
		case v1 && pre:
			return errors.New("objclient: swift takes either --auth-url with --user and --key, or --token with --storage-url, not both")
		case v1:
			if c.AuthURL == "" {
				return errors.New("objclient: swift v1 auth needs --auth-url (http://host:port/auth/v1.0)")
			}
			if err := checkBaseURL("--auth-url", c.AuthURL); err != nil {
				return err
			}
			if c.User == "" {
				return errors.New("objclient: swift v1 auth needs --user (account:user)")
			}
			if c.Key == "" {
				return errors.New("objclient: swift v1 auth needs --key")
			}
		case pre:
			if c.Token == "" {
				return errors.New("objclient: swift --storage-url needs --token")
			}
			if c.StorageURL == "" {
				return errors.New("objclient: swift --token needs --storage-url (http://host:port/v1/AUTH_account)")
			}
			if err := checkBaseURL("--storage-url", c.StorageURL); err != nil {
				return err
			}
		default:
			return errors.New("objclient: swift needs --auth-url, --user and --key, or --token and --storage-url")
		}
	default:
		return fmt.Errorf("objclient: unknown --protocol %q (want %s or %s)", c.Protocol, ProtocolS3, ProtocolSwift)
	}
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Concurrency < 0 {
		return fmt.Errorf("objclient: concurrency %d < 1", c.Concurrency)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Timeout < 0 {
		return fmt.Errorf("objclient: timeout %v < 0", c.Timeout)
	}
	return nil
}

// checkBaseURL accepts http(s)://host[:port][/path] and nothing else: a query or fragment
// would end up in every request URL (and in every signature).
func checkBaseURL(flag, s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("objclient: %s %q: %w", flag, s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("objclient: %s %q: want http://host:port or https://host:port", flag, s)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return fmt.Errorf("objclient: %s %q: must not have a query or fragment", flag, s)
	}
	if u.User != nil {
		return fmt.Errorf("objclient: %s %q: must not carry credentials; use the key flags", flag, s)
	}
	return nil
}

// New builds a client for cfg (validated and defaulted on a copy). It does not contact the
// store: Check does, and Swift v1 authentication happens on the first request.
func New(cfg Config) (Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch cfg.Protocol {
	case ProtocolSwift:
		return newSwift(cfg)
	default:
		return newS3(cfg)
	}
}
