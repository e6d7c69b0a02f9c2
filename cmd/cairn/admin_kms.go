package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cairn-store/cairn/internal/admin"
)

// newKMSCommands are `cairn admin kms ...`: the SSE-KMS keys objects can be encrypted under.
func newKMSCommands(f *adminFlags) []*cobra.Command {
	var alias string
	create := &cobra.Command{
		Use:   "create [--alias NAME]",
		Short: "Create an SSE-KMS key (its ID is what x-amz-server-side-encryption-aws-kms-key-id names)",
		Args:  usageArgs(0, 0, "cairn admin kms create [--alias NAME]"),
	}
	create.Flags().StringVar(&alias, "alias", "", "an alias for the key, named as alias/NAME in requests")
	create.RunE = f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
		k, err := c.CreateKMSKey(ctx, alias)
		if err != nil {
			return err
		}
		return printKMSKey(out, f.json, k)
	})

	list := &cobra.Command{Use: "list", Short: "List the SSE-KMS keys", Args: usageArgs(0, 0, "cairn admin kms list")}
	list.RunE = f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
		keys, err := c.KMSKeys(ctx)
		if err != nil {
			return err
		}
		if f.json {
			return printJSON(out, admin.KMSKeyList{Keys: keys})
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tALIAS\tENABLED\tCREATED")
		for _, k := range keys {
			fmt.Fprintf(tw, "%s\t%s\t%v\t%s\n", k.ID, k.Alias, k.Enabled, createdString(k.Created))
		}
		return tw.Flush()
	})

	show := &cobra.Command{Use: "show KEY", Short: "Show an SSE-KMS key (KEY: its ID, alias/NAME or ARN)", Args: usageArgs(1, 1, "cairn admin kms show KEY")}
	show.RunE = func(cmd *cobra.Command, args []string) error {
		return f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
			k, err := c.KMSKey(ctx, args[0])
			if err != nil {
				return err
			}
			return printKMSKey(out, f.json, k)
		})(cmd, args)
	}
	setEnabled := func(use string, enabled bool, short string) *cobra.Command {
		cmd := &cobra.Command{Use: use + " KEY", Short: short, Args: usageArgs(1, 1, "cairn admin kms "+use+" KEY")}
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			return f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
				k, err := c.SetKMSKeyEnabled(ctx, args[0], enabled)
				if err != nil {
					return err
				}
				return printKMSKey(out, f.json, k)
			})(cmd, args)
		}
		return cmd
	}
	return []*cobra.Command{create, list, show,
		setEnabled("enable", true, "Enable an SSE-KMS key"),
		setEnabled("disable", false, "Disable an SSE-KMS key: objects under it can be neither written nor read until it is enabled again")}
}

func printKMSKey(out io.Writer, asJSON bool, k admin.KMSKey) error {
	if asJSON {
		return printJSON(out, k)
	}
	_, err := fmt.Fprintf(out, "id:       %s\nalias:    %s\nenabled:  %v\ncreated:  %s\n", k.ID, k.Alias, k.Enabled, createdString(k.Created))
	return err
}
