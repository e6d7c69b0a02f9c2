package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-store/cairn/internal/advisor"
)

func newAdvisorCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "advisor",
		Short: "Hardware recommendations: from two of capacity, throughput and budget, the cluster that optimizes the third",
		Long: "The Swift Advisor method (sample the 1:N proxy:storage ratio, profile c:cN clusters, optimize the\n" +
			"third constraint) on a performance model of per-request resource demands. See docs/advisor.md.",
	}
	cmd.AddCommand(newAdvisorCatalogCommand(), newAdvisorDemandsCommand(), newAdvisorRecommendCommand(), newAdvisorCalibrateCommand(), newAdvisorValidateCommand())
	return cmd
}

func newAdvisorCatalogCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "catalog",
		Short: "Print the example hardware catalog (YAML); edit it and pass it to recommend --catalog",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(advisor.ExampleCatalog())
			return err
		},
	}
}

func newAdvisorDemandsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "demands",
		Short: "Print the default per-request demands (YAML) the model uses when --demands is not given",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(advisor.DefaultDemandsYAML())
			return err
		},
	}
}

// recommendFlags are the flags of `cairn advisor recommend`.
type recommendFlags struct {
	catalog, workload, demands   string
	capacity, throughput, budget string
	replicas                     int
	ec                           string
	zones                        int
	p99                          time.Duration
	maxUtil, fill                float64
	alternatives                 int
	jsonOut, htmlOut             string
}

func newAdvisorRecommendCommand() *cobra.Command {
	var f recommendFlags
	cmd := &cobra.Command{
		Use:   "recommend --catalog FILE --workload W (two of --capacity, --throughput, --budget)",
		Short: "Search the catalog for the cluster that optimizes the constraint not given",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			return runRecommend(cmd.OutOrStdout(), cmd.ErrOrStderr(), &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.catalog, "catalog", "", "hardware catalog (YAML; `cairn advisor catalog` prints an example)")
	fl.StringVar(&f.workload, "workload", "", "a built-in bench workload (A, B, C, D, …), a workload file, or a cairn bench JSON result")
	fl.StringVar(&f.demands, "demands", "", "per-request demands file (default: the shipped one, `cairn advisor demands`)")
	fl.StringVar(&f.capacity, "capacity", "", "usable capacity to hold, as 500TB or 2PB")
	fl.StringVar(&f.throughput, "throughput", "", "throughput to carry, as 800MB/s, 2GB/s or 5000ops/s")
	fl.StringVar(&f.budget, "budget", "", "budget in the catalog's currency over its horizon, as 250000 or 250k")
	fl.IntVar(&f.replicas, "replicas", 0, "replicas per object (default 3 unless --ec)")
	fl.StringVar(&f.ec, "ec", "", "erasure code K+M instead of replicas, as 4+2")
	fl.IntVar(&f.zones, "zones", 1, "zones the storage nodes are spread over (equal numbers of nodes)")
	fl.DurationVar(&f.p99, "p99", 0, "also bound the predicted p99 latency at the throughput asked for, as 50ms")
	fl.Float64Var(&f.maxUtil, "max-util", advisor.DefaultMaxUtilization, "highest utilization any resource is planned for")
	fl.Float64Var(&f.fill, "fill", advisor.DefaultFill, "fraction of raw capacity data may fill")
	fl.IntVar(&f.alternatives, "alternatives", 4, "runners-up to show")
	fl.StringVar(&f.jsonOut, "json", "", "also write the result as JSON to this file (- for stdout; the table then goes to stderr)")
	fl.StringVar(&f.htmlOut, "html", "", "also write an HTML report with charts to this file")
	return cmd
}

// errUsage marks a command line that cannot be run as given.
var errUsage = errors.New("advisor")

func runRecommend(stdout, stderr io.Writer, f *recommendFlags) error {
	if f.catalog == "" {
		return fmt.Errorf("%w: --catalog is required (`cairn advisor catalog > catalog.yaml` writes an example)", errUsage)
	}
	if f.workload == "" {
		return fmt.Errorf("%w: --workload is required (A, B, C, D, a workload file or a cairn bench JSON result)", errUsage)
	}
	var req advisor.Request
	var err error
	if f.capacity != "" {
		if req.CapacityTB, err = advisor.ParseCapacity(f.capacity); err != nil {
			return err
		}
	}
	if f.throughput != "" {
		if req.ThroughputMBps, req.ThroughputOps, err = advisor.ParseThroughput(f.throughput); err != nil {
			return err
		}
	}
	if f.budget != "" {
		if req.Budget, err = advisor.ParseBudget(f.budget); err != nil {
			return err
		}
	}
	req.Alternatives = f.alternatives
	if err := req.Validate(); err != nil {
		return err
	}
	pol, err := advisor.ParsePolicy(f.replicas, f.ec, f.zones)
	if err != nil {
		return err
	}
	cat, err := advisor.LoadCatalog(f.catalog)
	if err != nil {
		return err
	}
	var dem *advisor.Demands
	if f.demands != "" {
		dem, err = advisor.LoadDemands(f.demands)
	} else {
		dem, err = advisor.DefaultDemands()
	}
	if err != nil {
		return err
	}
	w, err := advisor.ResolveWorkload(f.workload)
	if err != nil {
		return err
	}
	m, err := advisor.NewModel(dem, w, pol, advisor.Options{MaxUtilization: f.maxUtil, Fill: f.fill, P99Seconds: f.p99.Seconds()})
	if err != nil {
		return err
	}
	res, err := advisor.Recommend(cat, m, req)
	if err != nil {
		return err
	}
	table := stdout
	if f.jsonOut == "-" {
		table = stderr
	}
	if err := advisor.WriteText(table, res); err != nil {
		return err
	}
	if f.jsonOut != "" {
		var b bytes.Buffer
		if err := advisor.WriteJSON(&b, res); err != nil {
			return err
		}
		if f.jsonOut == "-" {
			_, err = stdout.Write(b.Bytes())
		} else {
			err = os.WriteFile(f.jsonOut, b.Bytes(), 0o644)
		}
		if err != nil {
			return fmt.Errorf("advisor: writing --json: %w", err)
		}
	}
	if f.htmlOut != "" {
		if err := advisor.WriteHTMLFile(f.htmlOut, res); err != nil {
			return err
		}
	}
	return nil
}
