package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/spf13/cobra"
)

// newACLCommands: `cairn admin acl migrate`, which gives bucket ACLs stored before Cairn gave
// them S3's meaning that meaning, keeping everyone's access as it was (docs/api.md §7).
func newACLCommands(f *adminFlags) []*cobra.Command {
	var dryRun bool
	migrate := &cobra.Command{
		Use:   "migrate [--dry-run]",
		Short: "Give bucket ACLs set before 2026-11 S3's meaning, keeping everyone's access",
		Long: "Before 2026-11, a bucket ACL's READ also read every object in the bucket, as Swift's read ACL\n" +
			"does. Buckets whose ACL was set then keep that meaning until they are migrated. For each one,\n" +
			"migrate keeps the ACL (now: READ lists the bucket) and adds to the bucket policy a statement\n" +
			"that lets the same grantees read the objects (Sid " + "CairnBucketReadBefore2026...), so that\n" +
			"nobody's access widens or narrows. A bucket whose access could not be kept exactly is left as\n" +
			"it is, and the report says why. --dry-run only reports.",
		Args: usageArgs(0, 0, "cairn admin acl migrate [--dry-run]"),
	}
	migrate.Flags().BoolVar(&dryRun, "dry-run", false, "report what would be migrated; change nothing")
	migrate.RunE = f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
		rep, err := c.MigrateACLs(ctx, dryRun)
		if err != nil {
			return err
		}
		if f.json {
			return printJSON(out, rep)
		}
		verb := "migrated"
		if rep.DryRun {
			verb = "would migrate"
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ACCOUNT\tBUCKET\tRESULT")
		for _, b := range rep.Legacy {
			res := verb
			if len(b.Readers) > 0 {
				res += "; object reads for " + strings.Join(b.Readers, ", ") + " now in the bucket policy"
			}
			if b.Refused != "" {
				res = "left as it is: " + b.Refused
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", b.Account, b.Bucket, res)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%d buckets, %d with an ACL of the old meaning: %s %d, left %d\n", rep.Buckets, len(rep.Legacy), verb, rep.Migrated, rep.Refused)
		return err
	})
	return []*cobra.Command{migrate}
}
