package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/microstore"
	"github.com/cairn-store/cairn/internal/rmanager"
	"github.com/cairn-store/cairn/internal/vfs"
	"github.com/cairn-store/cairn/internal/workload"
)

// newMicrostoreCommand is `cairn microstore`: the cluster's microstores (docs/microstores.md),
// kept in the cluster's description through the admin API, with the root key.
func newMicrostoreCommand() *cobra.Command {
	var f adminFlags
	cmd := &cobra.Command{
		Use:   "microstore",
		Short: "Create, list, show, resize, assign and delete microstores (with the root key)",
		Long: "A microstore is a named set of proxies and a storage policy whose ring covers its own nodes and devices, " +
			"for one class of workload (A: small objects mostly read, B: small mostly written, C: large mostly read, " +
			"D: large mostly written; see cairn admin workload). The cluster keeps their description, versioned." + adminLong,
	}
	f.register(cmd.PersistentFlags())
	var proxies []string
	var classes []string
	var policyName string
	show := func(out io.Writer, d microstore.Description) error {
		if f.json {
			return printJSON(out, d)
		}
		return printMicrostores(out, d)
	}
	// changes runs a request that answers with the description, and prints it.
	changes := func(do func(ctx context.Context, c *admin.Client, args []string) (microstore.Description, error)) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			return f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
				d, err := do(ctx, c, args)
				if err != nil {
					return err
				}
				return show(out, d)
			})(cmd, args)
		}
	}
	create := &cobra.Command{Use: "create NAME --policy POLICY [--proxy HOST:PORT]... [--class A|B|C|D]...", Short: "Create a microstore",
		Args: usageArgs(1, 1, "cairn microstore create NAME --policy POLICY [--proxy HOST:PORT]... [--class A|B|C|D]...")}
	create.Flags().StringVar(&policyName, "policy", "", "the storage policy whose ring holds the microstore's objects")
	create.Flags().StringSliceVar(&proxies, "proxy", nil, "a proxy (host:port) that serves the microstore (repeatable)")
	create.Flags().StringSliceVar(&classes, "class", nil, "a workload class whose new buckets go to the microstore (repeatable)")
	create.RunE = func(cmd *cobra.Command, args []string) error {
		cs, err := parseClasses(classes)
		if err != nil {
			return err
		}
		return changes(func(ctx context.Context, c *admin.Client, args []string) (microstore.Description, error) {
			return c.CreateMicrostore(ctx, microstore.Microstore{Name: args[0], Policy: policyName, Proxies: proxies, Classes: cs})
		})(cmd, args)
	}
	list := &cobra.Command{Use: "list", Short: "List the microstores", Args: usageArgs(0, 0, "cairn microstore list")}
	list.RunE = changes(func(ctx context.Context, c *admin.Client, _ []string) (microstore.Description, error) {
		return c.Microstores(ctx)
	})
	showCmd := &cobra.Command{Use: "show NAME", Short: "Show one microstore", Args: usageArgs(1, 1, "cairn microstore show NAME")}
	showCmd.RunE = func(cmd *cobra.Command, args []string) error {
		return f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
			m, err := c.Microstore(ctx, args[0])
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(out, m)
			}
			return printMicrostores(out, microstore.Description{Microstores: []microstore.Microstore{m}})
		})(cmd, args)
	}
	resize := &cobra.Command{Use: "resize NAME --proxy HOST:PORT...", Short: "Give a microstore these proxies in place of its own",
		Args: usageArgs(1, 1, "cairn microstore resize NAME --proxy HOST:PORT...")}
	resize.Flags().StringSliceVar(&proxies, "proxy", nil, "a proxy (host:port) of the microstore (repeatable; none: no proxy of its own)")
	resize.RunE = changes(func(ctx context.Context, c *admin.Client, args []string) (microstore.Description, error) {
		return c.ResizeMicrostore(ctx, args[0], proxies)
	})
	assign := &cobra.Command{Use: "assign NAME --class A|B|C|D...", Short: "Send new buckets of these workload classes to a microstore",
		Args: usageArgs(1, 1, "cairn microstore assign NAME --class A|B|C|D...")}
	assign.Flags().StringSliceVar(&classes, "class", nil, "a workload class (repeatable; a class another microstore had moves here)")
	assign.RunE = func(cmd *cobra.Command, args []string) error {
		cs, err := parseClasses(classes)
		if err != nil {
			return err
		}
		return changes(func(ctx context.Context, c *admin.Client, args []string) (microstore.Description, error) {
			return c.AssignMicrostore(ctx, args[0], cs)
		})(cmd, args)
	}
	del := &cobra.Command{Use: "delete NAME", Short: "Delete a microstore (its policy's buckets are served by every proxy again)",
		Args: usageArgs(1, 1, "cairn microstore delete NAME")}
	del.RunE = changes(func(ctx context.Context, c *admin.Client, args []string) (microstore.Description, error) {
		return c.DeleteMicrostore(ctx, args[0])
	})
	pool := &cobra.Command{Use: "pool --proxy HOST:PORT...", Short: "Give the resource manager these free proxies, in place of the pool's",
		Args: usageArgs(0, 0, "cairn microstore pool --proxy HOST:PORT...")}
	pool.Flags().StringSliceVar(&proxies, "proxy", nil, "a free proxy (host:port; repeatable; none: an empty pool)")
	pool.RunE = changes(func(ctx context.Context, c *admin.Client, _ []string) (microstore.Description, error) {
		return c.SetMicrostorePool(ctx, proxies)
	})
	plan := &cobra.Command{Use: "plan", Short: "Show what the resource manager would do now, and why, with the utilization the advisor's model predicts",
		Args: usageArgs(0, 0, "cairn microstore plan")}
	plan.RunE = f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
		p, err := c.MicrostorePlan(ctx)
		if err != nil {
			return err
		}
		if f.json {
			return printJSON(out, p)
		}
		return printPlan(out, p)
	})
	cmd.AddCommand(create, list, showCmd, resize, assign, del, pool, plan, newHAProxyCommand(&f))
	return cmd
}

func parseClasses(names []string) ([]workload.Class, error) {
	var out []workload.Class
	for _, n := range names {
		var c workload.Class
		if err := c.UnmarshalText([]byte(strings.ToUpper(strings.TrimSpace(n)))); err != nil || c == workload.Unclassified {
			return nil, fmt.Errorf("--class %q: one of A, B, C, D", n)
		}
		out = append(out, c)
	}
	return out, nil
}

func printPlan(out io.Writer, p rmanager.Plan) error {
	fmt.Fprint(out, p.String())
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nMICROSTORE\tPROXIES\tCORES\tCPU CORES NEEDED\tNETWORK MB/S\tUTILIZATION\tAFTER")
	for i, b := range p.Before {
		a := p.After[i]
		fmt.Fprintf(tw, "%s\t%d -> %d\t%.1f\t%.2f\t%.1f\t%.0f%% (%s)\t%.0f%%\n", b.Microstore, b.Proxies, a.Proxies, b.Cores, b.CPU, b.Network/1e6, 100*b.Utilization, b.Resource, 100*a.Utilization)
	}
	return tw.Flush()
}

func printMicrostores(out io.Writer, d microstore.Description) error {
	if d.Generation > 0 {
		fmt.Fprintf(out, "generation %d, changed %s\n", d.Generation, d.Changed.Format("2006-01-02 15:04:05 UTC"))
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPOLICY\tCLASSES\tPROXIES")
	for _, m := range d.Microstores {
		cs := make([]string, len(m.Classes))
		for i, c := range m.Classes {
			cs[i] = c.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, m.Policy, dash(strings.Join(cs, ",")), dash(strings.Join(m.Proxies, ",")))
	}
	if len(d.Pool) > 0 {
		fmt.Fprintf(tw, "(free pool)\t\t\t%s\n", strings.Join(d.Pool, ","))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// newHAProxyCommand is `cairn microstore haproxy`: an HAProxy configuration, and the bucket
// map it reads, from the microstores' description and the cluster's buckets.
func newHAProxyCommand(f *adminFlags) *cobra.Command {
	var o microstore.HAProxyOptions
	var configPath string
	cmd := &cobra.Command{Use: "haproxy --map PATH [--bind HOST:PORT] [--proxy HOST:PORT]... [--domain DOMAIN]... [--config PATH]",
		Short: "Write an HAProxy configuration that sends each microstore's buckets to its proxies",
		Long: "Writes the bucket map (--map, which the configuration names) and prints the configuration (or writes it to --config). " +
			"Buckets the map does not name (made since, an S3 name two accounts use) go to every proxy, whose load redirector " +
			"passes them on: run it again, and reload HAProxy, when buckets or microstores change.",
		Args: usageArgs(0, 0, "cairn microstore haproxy --map PATH [--bind HOST:PORT] [--proxy HOST:PORT]... [--domain DOMAIN]... [--config PATH]")}
	cmd.Flags().StringVar(&o.MapFile, "map", "", "where to write the bucket map, an absolute path (required)")
	cmd.Flags().StringVar(&o.Bind, "bind", ":80", "where HAProxy listens")
	cmd.Flags().StringSliceVar(&o.Proxies, "proxy", nil, "a proxy (host:port) serving buckets of no microstore (repeatable; the microstores' own are added)")
	cmd.Flags().StringSliceVar(&o.Domains, "domain", nil, "an S3 virtual-host domain of the proxies (--domain of cairn server; repeatable)")
	cmd.Flags().StringVar(&configPath, "config", "-", "where to write the configuration (-: standard output)")
	cmd.RunE = f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
		d, err := c.Microstores(ctx)
		if err != nil {
			return err
		}
		l, err := c.MicrostoreBuckets(ctx)
		if err != nil {
			return err
		}
		cfg, m, err := d.HAProxy(o, l.Buckets)
		if err != nil {
			return err
		}
		if l.Truncated {
			fmt.Fprintf(cmd.ErrOrStderr(), "cairn microstore haproxy: the cluster has more buckets than the map holds (%d); the rest go to every proxy\n", len(l.Buckets))
		}
		if err := vfs.WriteFileDurable(vfs.Default, o.MapFile, m); err != nil {
			return err
		}
		if configPath == "-" {
			_, err := out.Write(cfg)
			return err
		}
		return vfs.WriteFileDurable(vfs.Default, configPath, cfg)
	})
	return cmd
}
