package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-store/cairn/internal/objclient"
)

// The AWS SDKs' configuration, read as they read it, so that a user of aws cli, s5cmd or rclone
// has the same keys and endpoint here without typing them again: for each of the key, the
// secret, the region and the endpoint that neither a flag nor a CAIRN_* variable gives,
//   - the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION (or
//     AWS_DEFAULT_REGION), AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL);
//   - then the profile (--profile, else AWS_PROFILE, else "default") of the shared credentials
//     file (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials: aws_access_key_id,
//     aws_secret_access_key) and of the config file (AWS_CONFIG_FILE, else ~/.aws/config, whose
//     sections are [default] and [profile NAME]: region, endpoint_url, and keys too).
// A profile named by --profile comes before the environment's keys, as in aws cli. Only for S3.

// awsSetting is one value the SDKs' configuration may give.
type awsSetting struct {
	flag     string   // the cairn flag it fills
	env      []string // environment variables, in order
	profile  []string // keys of a profile section, in order
	explicit bool     // a profile given by --profile comes before the environment
}

var awsSettings = []awsSetting{
	{flag: "access-key", env: []string{"AWS_ACCESS_KEY_ID"}, profile: []string{"aws_access_key_id"}, explicit: true},
	{flag: "secret-key", env: []string{"AWS_SECRET_ACCESS_KEY"}, profile: []string{"aws_secret_access_key"}, explicit: true},
	{flag: "region", env: []string{"AWS_REGION", "AWS_DEFAULT_REGION"}, profile: []string{"region"}},
	{flag: "endpoint", env: []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"}, profile: []string{"endpoint_url"}},
}

// useAWSConfig fills the connection flags that neither a flag nor a CAIRN_* variable set from
// the AWS SDKs' configuration. It runs after bindEnv.
func (f *connFlags) useAWSConfig(cmd *cobra.Command) error {
	if f.cfg.Protocol != "" && f.cfg.Protocol != objclient.ProtocolS3 {
		return nil // "" is S3, objclient's default
	}
	profile, explicit := f.profile, f.profile != ""
	if !explicit {
		profile = os.Getenv("AWS_PROFILE")
	}
	if profile == "" {
		profile = "default"
	}
	var prof map[string]string // read on first need
	loaded := false
	fromProfile := func(keys []string) (string, error) {
		if !loaded {
			var err error
			if prof, err = readAWSProfile(profile); err != nil {
				return "", err
			}
			loaded = true
			if prof == nil && explicit {
				return "", fmt.Errorf("--profile %s: no such profile in the AWS credentials or config file", profile)
			}
		}
		for _, k := range keys {
			if v := prof[k]; v != "" {
				return v, nil
			}
		}
		return "", nil
	}
	for _, s := range awsSettings {
		fl := cmd.Flags().Lookup(s.flag)
		if fl == nil || fl.Changed || os.Getenv("CAIRN_"+strings.ToUpper(strings.ReplaceAll(s.flag, "-", "_"))) != "" {
			continue
		}
		var v string
		if explicit && s.explicit {
			var err error
			if v, err = fromProfile(s.profile); err != nil {
				return err
			}
		}
		for _, e := range s.env {
			if v == "" {
				v = os.Getenv(e)
			}
		}
		if v == "" {
			var err error
			if v, err = fromProfile(s.profile); err != nil {
				return err
			}
		}
		if v != "" {
			if err := fl.Value.Set(v); err != nil {
				return fmt.Errorf("%s from the AWS configuration: %w", s.flag, err)
			}
		}
	}
	return nil
}

// readAWSProfile returns the settings of a profile, the credentials file's over the config
// file's; nil when neither has it.
func readAWSProfile(name string) (map[string]string, error) {
	home, _ := os.UserHomeDir()
	credFile := os.Getenv("AWS_SHARED_CREDENTIALS_FILE")
	if credFile == "" && home != "" {
		credFile = filepath.Join(home, ".aws", "credentials")
	}
	confFile := os.Getenv("AWS_CONFIG_FILE")
	if confFile == "" && home != "" {
		confFile = filepath.Join(home, ".aws", "config")
	}
	confSection := "profile " + name
	if name == "default" {
		confSection = "default"
	}
	conf, err := readINISection(confFile, confSection)
	if err != nil {
		return nil, err
	}
	cred, err := readINISection(credFile, name)
	if err != nil {
		return nil, err
	}
	if conf == nil && cred == nil {
		return nil, nil
	}
	out := map[string]string{}
	for k, v := range conf {
		out[k] = v
	}
	for k, v := range cred {
		out[k] = v
	}
	return out, nil
}

// readINISection reads one section of an AWS INI file ("" path or no file: nil). Keys are
// lower-case; an indented line continues a nested setting (s3 = ...), which is skipped.
func readINISection(path, section string) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	defer f.Close()
	var out map[string]string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';' {
			continue
		}
		if strings.HasPrefix(trimmed, "[") && strings.HasSuffix(trimmed, "]") {
			in = strings.Join(strings.Fields(trimmed[1:len(trimmed)-1]), " ") == section
			if in && out == nil {
				out = map[string]string{}
			}
			continue
		}
		if !in || line[0] == ' ' || line[0] == '\t' {
			continue
		}
		k, v, ok := strings.Cut(trimmed, "=")
		if ok {
			out[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("AWS configuration %s: %w", path, err)
	}
	return out, nil
}
