package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/auth"
	"github.com/cairn-store/cairn/internal/bench/workload"
)

// `cairn admin`: accounts, users and keys, through the admin HTTP API with the root key.

const adminLong = "\n\nThe admin API is served on the S3 endpoint and answers the root key only. Every flag\n" +
	"can also be set as CAIRN_<FLAG> in the environment (CAIRN_ENDPOINT, CAIRN_ACCESS_KEY,\n" +
	"CAIRN_SECRET_KEY), which keeps the root key off the command line. See docs/admin.md."

// adminTimeout bounds one admin command; every one is a single small request or two.
const adminTimeout = time.Minute

// adminFlags are shared by every admin command (persistent flags of `cairn admin`).
type adminFlags struct {
	endpoint, accessKey, secretKey, region string
	json                                   bool
}

func (f *adminFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.endpoint, "endpoint", defaultEndpoint, "the server's S3 endpoint URL")
	fs.StringVar(&f.accessKey, "access-key", "", "the root access key")
	fs.StringVar(&f.secretKey, "secret-key", "", "the root secret key")
	fs.StringVar(&f.region, "region", "us-east-1", "region used in the signature")
	fs.BoolVar(&f.json, "json", false, "print the answer as JSON, for scripts")
}

// adminRun wraps an admin command's work: flags from the environment, the client, a context
// that ends on SIGINT/SIGTERM or after adminTimeout, and failures as one clear line.
func (f *adminFlags) run(do func(ctx context.Context, c *admin.Client, out io.Writer) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if err := bindEnv(cmd); err != nil {
			return err
		}
		c, err := admin.NewClient(admin.ClientConfig{Endpoint: f.endpoint, AccessKey: f.accessKey, SecretKey: f.secretKey, Region: f.region})
		if err != nil {
			return errors.New(strings.TrimPrefix(err.Error(), "admin: "))
		}
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		ctx, cancel := context.WithTimeout(ctx, adminTimeout)
		defer cancel()
		return adminError(f.endpoint, do(ctx, c, cmd.OutOrStdout()))
	}
}

// adminError turns a failure into the line a person needs: what the server said, or why it
// could not be reached.
func adminError(endpoint string, err error) error {
	var ae *admin.Error
	var ue *url.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae) && ae.Status == 403:
		return fmt.Errorf("%s refused the key: %s", endpoint, ae.Message)
	case errors.As(err, &ae):
		return fmt.Errorf("%s (%s)", ae.Message, ae.Code)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("cannot reach %s: connection refused", endpoint)
	case errors.As(err, &ue):
		var ne net.Error
		if errors.As(ue.Err, &ne) && ne.Timeout() {
			return fmt.Errorf("cannot reach %s: timed out", endpoint)
		}
		return fmt.Errorf("cannot reach %s: %v", endpoint, ue.Err)
	}
	return err
}

func newAdminCommand() *cobra.Command {
	var f adminFlags
	cmd := &cobra.Command{
		Use:   "admin",
		Short: "Manage accounts, users and keys; show the cluster's status (with the root key)",
		Long:  "Manage accounts (tenants), their users and the users' keys, see what an account stores, and see the cluster's nodes, devices and replication." + adminLong,
	}
	f.register(cmd.PersistentFlags())
	account := &cobra.Command{Use: "account", Short: "Create, list, show, delete accounts; set quotas; show usage"}
	account.AddCommand(newAccountCommands(&f)...)
	user := &cobra.Command{Use: "user", Short: "Create, list and delete users; rotate their keys"}
	user.AddCommand(newUserCommands(&f)...)
	kms := &cobra.Command{Use: "kms", Short: "Create, list, show, enable and disable SSE-KMS keys"}
	kms.AddCommand(newKMSCommands(&f)...)
	acl := &cobra.Command{Use: "acl", Short: "Migrate bucket ACLs set before they had S3's meaning"}
	acl.AddCommand(newACLCommands(&f)...)
	cmd.AddCommand(account, user, kms, acl, newStatusCommand(&f), newWorkloadCommand(&f))
	return cmd
}

func newAccountCommands(f *adminFlags) []*cobra.Command {
	create := &cobra.Command{
		Use:   "create NAME",
		Short: "Create an account (1 to 64 letters, digits, _ and -)",
		Args:  usageArgs(1, 1, "cairn admin account create NAME"),
	}
	create.RunE = func(cmd *cobra.Command, args []string) error {
		return f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
			a, err := c.CreateAccount(ctx, args[0])
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(out, a)
			}
			fmt.Fprintf(out, "created account %s\n", a.Name)
			return nil
		})(cmd, args)
	}

	list := &cobra.Command{Use: "list", Short: "List the accounts", Args: usageArgs(0, 0, "cairn admin account list")}
	list.RunE = f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
		accts, err := c.Accounts(ctx)
		if err != nil {
			return err
		}
		if f.json {
			return printJSON(out, admin.AccountList{Accounts: accts})
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ACCOUNT\tUSERS\tQUOTA BYTES\tQUOTA OBJECTS\tCREATED")
		for _, a := range accts {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", a.Name, a.Users, quotaString(a.QuotaBytes, true), quotaString(a.QuotaObjects, false), createdString(a.Created))
		}
		return tw.Flush()
	})

	show := &cobra.Command{Use: "show NAME", Short: "Show an account and its users", Args: usageArgs(1, 1, "cairn admin account show NAME")}
	show.RunE = func(cmd *cobra.Command, args []string) error {
		return f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
			a, err := c.Account(ctx, args[0])
			if err != nil {
				return err
			}
			users, err := c.Users(ctx, args[0])
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(out, struct {
					Account auth.Account `json:"account"`
					Users   []auth.User  `json:"users"`
				}{a, users})
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "account:\t%s\ncreated:\t%s\nquota bytes:\t%s\nquota objects:\t%s\n", a.Name, createdString(a.Created),
				quotaString(a.QuotaBytes, true), quotaString(a.QuotaObjects, false))
			for _, k := range slices.Sorted(maps.Keys(a.Metadata)) {
				fmt.Fprintf(tw, "meta %s:\t%s\n", k, a.Metadata[k])
			}
			tw.Flush()
			printUsers(out, users)
			return nil
		})(cmd, args)
	}

	del := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete an account that has no users and stores nothing",
		Args:  usageArgs(1, 1, "cairn admin account delete NAME"),
	}
	del.RunE = func(cmd *cobra.Command, args []string) error {
		return f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
			if err := c.DeleteAccount(ctx, args[0]); err != nil {
				return err
			}
			if f.json {
				return printJSON(out, map[string]any{"account": args[0], "deleted": true})
			}
			fmt.Fprintf(out, "deleted account %s\n", args[0])
			return nil
		})(cmd, args)
	}

	var qBytes, qObjects string
	quota := &cobra.Command{
		Use:   "quota NAME [--bytes SIZE] [--objects N]",
		Short: "Set an account's quota (0 or none: no limit); without flags, show it",
		Long: "Set the quota of account NAME: --bytes as 10GiB, 500MB, 2TiB or a plain number,\n" +
			"--objects as a number; 0 or none removes a limit, and a limit not given is kept.\n" +
			"Quotas are recorded now and enforced by the front ends as they learn to." + adminLong,
		Args: usageArgs(1, 1, "cairn admin account quota NAME [--bytes SIZE] [--objects N]"),
	}
	quota.Flags().StringVar(&qBytes, "bytes", "", "bytes the account may store, e.g. 10GiB (0 or none: no limit)")
	quota.Flags().StringVar(&qObjects, "objects", "", "objects the account may store (0 or none: no limit)")
	quota.RunE = func(cmd *cobra.Command, args []string) error {
		return f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
			var bp, op *int64
			if cmd.Flags().Changed("bytes") {
				n, err := parseQuota(qBytes, true)
				if err != nil {
					return fmt.Errorf("--bytes: %w", err)
				}
				bp = &n
			}
			if cmd.Flags().Changed("objects") {
				n, err := parseQuota(qObjects, false)
				if err != nil {
					return fmt.Errorf("--objects: %w", err)
				}
				op = &n
			}
			var a auth.Account
			var err error
			if bp == nil && op == nil {
				a, err = c.Account(ctx, args[0])
			} else {
				a, err = c.SetQuota(ctx, args[0], bp, op)
			}
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(out, map[string]any{"account": a.Name, "quota_bytes": a.QuotaBytes, "quota_objects": a.QuotaObjects})
			}
			fmt.Fprintf(out, "account %s: quota bytes %s, quota objects %s\n", a.Name, quotaString(a.QuotaBytes, true), quotaString(a.QuotaObjects, false))
			return nil
		})(cmd, args)
	}

	usage := &cobra.Command{Use: "usage NAME", Short: "Show what an account stores, against its quota", Args: usageArgs(1, 1, "cairn admin account usage NAME")}
	usage.RunE = func(cmd *cobra.Command, args []string) error {
		return f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
			u, err := c.Usage(ctx, args[0])
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(out, u)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "account:\t%s\ncontainers:\t%d\n", u.Account, u.Containers)
			fmt.Fprintf(tw, "objects:\t%d\t(quota %s)\n", u.Objects, quotaString(u.QuotaObjects, false))
			fmt.Fprintf(tw, "bytes:\t%s\t(quota %s)\n", bytesString(u.Bytes), quotaString(u.QuotaBytes, true))
			return tw.Flush()
		})(cmd, args)
	}
	return []*cobra.Command{create, list, show, del, quota, usage}
}

func newUserCommands(f *adminFlags) []*cobra.Command {
	var isAdmin bool
	create := &cobra.Command{
		Use:   "create ACCOUNT:USER [--admin]",
		Short: "Create a user and print its S3 keys and Swift key (shown this once)",
		Long: "Create USER in ACCOUNT with new keys: an S3 access key and secret key, and a Swift key\n" +
			"(X-Auth-User: ACCOUNT:USER, X-Auth-Key: KEY). The secrets are shown this once; a lost\n" +
			"secret is replaced with rotate-keys. --admin makes the user an administrator of its\n" +
			"account." + adminLong,
		Args: usageArgs(1, 1, "cairn admin user create ACCOUNT:USER [--admin]"),
	}
	var given auth.GivenKeys
	create.Flags().BoolVar(&isAdmin, "admin", false, "the user administers its account")
	create.Flags().StringVar(&given.AccessKey, "user-access-key", "", "use this S3 access key instead of a generated one (3-128 printable characters, no '/')")
	create.Flags().StringVar(&given.SecretKey, "user-secret-key", "", "use this S3 secret key instead of a generated one (6-128 characters)")
	create.Flags().StringVar(&given.SwiftKey, "user-swift-key", "", "use this Swift key instead of a generated one (6-128 characters)")
	create.RunE = func(cmd *cobra.Command, args []string) error {
		account, user, err := splitUser(args[0])
		if err != nil {
			return err
		}
		return f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
			uc, err := c.CreateUserWithKeys(ctx, account, user, isAdmin, given)
			if err != nil {
				return err
			}
			return f.printCredentials(out, cmd.ErrOrStderr(), uc)
		})(cmd, args)
	}

	list := &cobra.Command{Use: "list ACCOUNT", Short: "List an account's users (no secrets)", Args: usageArgs(1, 1, "cairn admin user list ACCOUNT")}
	list.RunE = func(cmd *cobra.Command, args []string) error {
		return f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
			users, err := c.Users(ctx, args[0])
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(out, admin.UserList{Users: users})
			}
			printUsers(out, users)
			return nil
		})(cmd, args)
	}

	del := &cobra.Command{Use: "delete ACCOUNT:USER", Short: "Delete a user; its keys stop working at once", Args: usageArgs(1, 1, "cairn admin user delete ACCOUNT:USER")}
	del.RunE = func(cmd *cobra.Command, args []string) error {
		account, user, err := splitUser(args[0])
		if err != nil {
			return err
		}
		return f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
			if err := c.DeleteUser(ctx, account, user); err != nil {
				return err
			}
			if f.json {
				return printJSON(out, map[string]any{"account": account, "user": user, "deleted": true})
			}
			fmt.Fprintf(out, "deleted user %s:%s\n", account, user)
			return nil
		})(cmd, args)
	}

	rotate := &cobra.Command{
		Use:   "rotate-keys ACCOUNT:USER",
		Short: "Replace a user's S3 keys and Swift key; the old ones stop working at once",
		Args:  usageArgs(1, 1, "cairn admin user rotate-keys ACCOUNT:USER"),
	}
	rotate.RunE = func(cmd *cobra.Command, args []string) error {
		account, user, err := splitUser(args[0])
		if err != nil {
			return err
		}
		return f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
			uc, err := c.RotateKeys(ctx, account, user)
			if err != nil {
				return err
			}
			return f.printCredentials(out, cmd.ErrOrStderr(), uc)
		})(cmd, args)
	}
	return []*cobra.Command{create, list, del, rotate}
}

// splitUser splits ACCOUNT:USER; both parts are checked by the server.
func splitUser(arg string) (account, user string, err error) {
	account, user, ok := strings.Cut(arg, ":")
	if !ok || account == "" || user == "" {
		return "", "", fmt.Errorf("%q: want ACCOUNT:USER", arg)
	}
	return account, user, nil
}

func (f *adminFlags) printCredentials(out, errOut io.Writer, uc auth.UserCredentials) error {
	if f.json {
		return printJSON(out, uc)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	role := "user"
	if uc.Admin {
		role = "account admin"
	}
	fmt.Fprintf(tw, "user:\t%s:%s (%s)\n", uc.Account, uc.User, role)
	fmt.Fprintf(tw, "S3 access key:\t%s\n", uc.AccessKey)
	fmt.Fprintf(tw, "S3 secret key:\t%s\n", uc.SecretKey)
	fmt.Fprintf(tw, "Swift user:\t%s:%s\t(X-Auth-User)\n", uc.Account, uc.User)
	fmt.Fprintf(tw, "Swift key:\t%s\t(X-Auth-Key)\n", uc.SwiftKey)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(errOut, "cairn: keep these keys now: the secret key and the Swift key are not shown again")
	return nil
}

func printUsers(out io.Writer, users []auth.User) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "USER\tROLE\tACCESS KEY\tCREATED")
	for _, u := range users {
		role := "user"
		switch {
		case u.Root:
			role = "root"
		case u.Admin:
			role = "admin"
		}
		fmt.Fprintf(tw, "%s:%s\t%s\t%s\t%s\n", u.Account, u.User, role, u.AccessKey, createdString(u.Created))
	}
	tw.Flush()
}

func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// parseQuota reads a limit: "none" or 0 for no limit; bytes take sizes up to PiB.
func parseQuota(s string, isBytes bool) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "none" || t == "0" {
		return 0, nil
	}
	if !isBytes {
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%q: want a number of objects, 0 or none", s)
		}
		return n, nil
	}
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"tib", 1 << 40}, {"pib", 1 << 50}, {"tb", 1e12}, {"pb", 1e15}, {"t", 1 << 40}, {"p", 1 << 50}} {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || v < 0 || v*u.mult > 1<<62 {
				return 0, fmt.Errorf("%q: want a size such as 10GiB, 2TiB or 500MB", s)
			}
			return int64(v * u.mult), nil
		}
	}
	n, err := workload.ParseSize(t)
	if err != nil {
		return 0, fmt.Errorf("%q: want a size such as 10GiB, 2TiB or 500MB", s)
	}
	return n, nil
}

func quotaString(n int64, isBytes bool) string {
	if n == 0 {
		return "none"
	}
	if isBytes {
		return bytesString(n)
	}
	return strconv.FormatInt(n, 10)
}

// bytesString prints a byte count exactly, with a binary-unit reading beside large ones.
func bytesString(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	if n < 1<<10 {
		return strconv.FormatInt(n, 10) + " B"
	}
	v, i := float64(n)/(1<<10), 0
	for v >= 1<<10 && i < len(units)-1 {
		v /= 1 << 10
		i++
	}
	return fmt.Sprintf("%d B (%.1f %s)", n, v, units[i])
}

func createdString(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
