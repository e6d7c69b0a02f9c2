package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "cairn",
		Short:         "Cairn: an object store for private storage clouds (S3 and Swift)",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServerCommand())
	root.AddCommand(newBenchCommand())
	root.AddCommand(newClientCommands()...)
	root.AddCommand(newAdminCommand())
	root.AddCommand(newMicrostoreCommand())
	root.AddCommand(newRingCommand())
	root.AddCommand(newLocalClusterCommand())
	root.AddCommand(newAdvisorCommand())
	return root
}

// bindEnv lets every flag of cmd be set by an environment variable CAIRN_<FLAG> (dashes become
// underscores); a flag given on the command line wins.
func bindEnv(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Changed || err != nil {
			return
		}
		name := "CAIRN_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(name); ok {
			if serr := f.Value.Set(v); serr != nil {
				err = fmt.Errorf("environment variable %s: %w", name, serr)
			}
		}
	})
	return err
}
