package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-store/cairn/internal/ring"
)

// `cairn ring`: build the rings of a cluster (a builder file per ring), and write the ring files
// the servers read (Swift's .ring.gz format). See docs/operations.md, "Rings".

const ringLong = "\n\nA BUILDER file (e.g. object.builder) holds a ring's devices and its assignment of\n" +
	"partitions; `write` turns it into the ring file servers read (object.ring.gz, in Swift's\n" +
	"format, which Swift reads too). Build one ring each for objects, containers and accounts.\n" +
	"See docs/operations.md (Rings)."

func newRingCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ring",
		Short: "Build rings: devices, weights, rebalancing, ring files",
		Long:  "Build the rings that place a cluster's data on its devices." + ringLong,
	}
	cmd.AddCommand(newRingCreateCommand(), newRingAddCommand(), newRingRemoveCommand(), newRingSetWeightCommand(),
		newRingRebalanceCommand(), newRingShowCommand(), newRingWriteCommand(), newRingPretendCommand(), newRingChangeDoneCommand())
	return cmd
}

// ringError makes a builder error one line without the package's prefix.
func ringError(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(strings.Replace(err.Error(), "invalid ring: ", "", 1))
}

func newRingCreateCommand() *cobra.Command {
	var power, replicas, hours int
	var prefix, suffix string
	var force bool
	cmd := &cobra.Command{
		Use:   "create BUILDER --part-power P --replicas N --min-part-hours H",
		Short: "Start a builder file: 2^P partitions, N replicas, H hours between moves of a partition",
		Args:  usageArgs(1, 1, "cairn ring create BUILDER --part-power P --replicas N --min-part-hours H"),
	}
	cmd.Flags().IntVar(&power, "part-power", 0, "partition power P: the ring has 2^P partitions (choose about 100 partitions per disk the cluster will ever have; it cannot change)")
	cmd.Flags().IntVar(&replicas, "replicas", 3, "replicas of each partition")
	cmd.Flags().IntVar(&hours, "min-part-hours", 1, "hours before a partition may move again (give replication time to catch up)")
	cmd.Flags().StringVar(&prefix, "hash-path-prefix", "", "secret mixed into every name's hash (Swift's swift_hash_path_prefix); never change it once data is stored")
	cmd.Flags().StringVar(&suffix, "hash-path-suffix", "", "secret mixed into every name's hash (Swift's swift_hash_path_suffix)")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing builder file")
	cmd.MarkFlagRequired("part-power")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if power < 0 {
			return fmt.Errorf("--part-power %d: 0 or more", power)
		}
		if _, err := os.Stat(args[0]); err == nil && !force {
			return fmt.Errorf("%s exists (--force overwrites it, and every assignment in it)", args[0])
		}
		b, err := ring.NewBuilder(uint(power), replicas, hours)
		if err != nil {
			return ringError(err)
		}
		b.HashPrefix, b.HashSuffix = prefix, suffix
		if err := b.Save(args[0]); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "created %s: %d partitions, %d replicas, min_part_hours %d\n", args[0], b.Partitions(), replicas, hours)
		return nil
	}
	return cmd
}

// editBuilder loads a builder, applies a change, and saves it.
func editBuilder(path string, change func(b *ring.Builder) error) error {
	b, err := ring.LoadBuilder(path)
	if err != nil {
		return ringError(err)
	}
	if err := change(b); err != nil {
		return ringError(err)
	}
	return b.Save(path)
}

func newRingAddCommand() *cobra.Command {
	var d ring.Device
	cmd := &cobra.Command{
		Use:   "add BUILDER --region R --zone Z --node HOST:PORT --device NAME --weight W",
		Short: "Add a device; it gets partitions at the next rebalance",
		Args:  usageArgs(1, 1, "cairn ring add BUILDER --region R --zone Z --node HOST:PORT --device NAME --weight W"),
	}
	cmd.Flags().IntVar(&d.Region, "region", 1, "region (a site: replicas spread over regions first)")
	cmd.Flags().IntVar(&d.Zone, "zone", 1, "zone within the region (a failure domain: a rack, a power feed)")
	cmd.Flags().StringVar(&d.Node, "node", "", "the storage node's address, HOST:PORT")
	cmd.Flags().StringVar(&d.Name, "device", "", "the device's name on the node (e.g. sdb1)")
	cmd.Flags().Float64Var(&d.Weight, "weight", 0, "relative capacity: partitions go in proportion to weight (e.g. the size in GB)")
	cmd.Flags().StringVar(&d.ReplicationNode, "replication-node", "", "HOST:PORT for replication traffic (default: --node)")
	cmd.Flags().StringVar(&d.Meta, "meta", "", "free text kept with the device")
	cmd.Flags().IntVar(&d.ID, "id", -1, "device id (default: the next unused)")
	for _, f := range []string{"node", "device", "weight"} {
		cmd.MarkFlagRequired(f)
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return editBuilder(args[0], func(b *ring.Builder) error {
			id, err := b.Add(d)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added device %d: %s\n", id, devString(&d))
			return nil
		})
	}
	return cmd
}

func devString(d *ring.Device) string {
	return fmt.Sprintf("r%dz%d %s/%s weight %g", d.Region, d.Zone, d.Node, d.Name, d.Weight)
}

// deviceSelector picks devices by --id or by --node (and --device).
type deviceSelector struct {
	id     int
	node   string
	device string
}

func (s *deviceSelector) register(cmd *cobra.Command) {
	cmd.Flags().IntVar(&s.id, "id", -1, "the device's id")
	cmd.Flags().StringVar(&s.node, "node", "", "every device of the node HOST:PORT (with --device: that one)")
	cmd.Flags().StringVar(&s.device, "device", "", "with --node: the device of that name")
}

func (s *deviceSelector) ids(b *ring.Builder) ([]int, error) {
	switch {
	case s.id >= 0 && s.node == "" && s.device == "":
		if b.Device(s.id) == nil {
			return nil, fmt.Errorf("no device %d", s.id)
		}
		return []int{s.id}, nil
	case s.id < 0 && s.node != "":
		ids := b.Find(s.node, s.device)
		if len(ids) == 0 {
			return nil, fmt.Errorf("no device on node %s named %q", s.node, s.device)
		}
		return ids, nil
	}
	return nil, errors.New("name the device: --id N, or --node HOST:PORT [--device NAME]")
}

func newRingRemoveCommand() *cobra.Command {
	var sel deviceSelector
	cmd := &cobra.Command{
		Use:   "remove BUILDER (--id N | --node HOST:PORT [--device NAME])",
		Short: "Remove devices: the next rebalance moves their partitions away at once",
		Long: "Mark devices for removal. The next rebalance moves every partition they hold to other\n" +
			"devices, whatever min_part_hours says (a removed disk is taken to be gone), and drops\n" +
			"them. To empty a working disk gradually, lower its weight with set-weight instead.",
		Args: usageArgs(1, 1, "cairn ring remove BUILDER (--id N | --node HOST:PORT [--device NAME])"),
	}
	sel.register(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return editBuilder(args[0], func(b *ring.Builder) error {
			ids, err := sel.ids(b)
			if err != nil {
				return err
			}
			for _, id := range ids {
				if err := b.Remove(id); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "device %d (%s) will be removed at the next rebalance\n", id, devString(&b.Device(id).Device))
			}
			return nil
		})
	}
	return cmd
}

func newRingSetWeightCommand() *cobra.Command {
	var sel deviceSelector
	var weight float64
	cmd := &cobra.Command{
		Use:   "set-weight BUILDER (--id N | --node HOST:PORT [--device NAME]) --weight W",
		Short: "Change devices' weight; 0 drains them",
		Args:  usageArgs(1, 1, "cairn ring set-weight BUILDER (--id N | --node HOST:PORT [--device NAME]) --weight W"),
	}
	sel.register(cmd)
	cmd.Flags().Float64Var(&weight, "weight", 0, "the new weight")
	cmd.MarkFlagRequired("weight")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return editBuilder(args[0], func(b *ring.Builder) error {
			ids, err := sel.ids(b)
			if err != nil {
				return err
			}
			for _, id := range ids {
				if err := b.SetWeight(id, weight); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "device %d: weight %g\n", id, weight)
			}
			return nil
		})
	}
	return cmd
}

func newRingRebalanceCommand() *cobra.Command {
	var seed uint64
	var now string
	cmd := &cobra.Command{
		Use:   "rebalance BUILDER",
		Short: "Assign partitions to devices, moving as few as possible",
		Long: "Assign partitions to devices by weight, replicas as widely spread over regions, zones,\n" +
			"nodes and devices as the weights allow, moving at most one replica of a partition per\n" +
			"min_part_hours. Prints how many partition-replicas moved, and the balance (the worst\n" +
			"device's distance from its share by weight, in %) and dispersion (the % of partitions\n" +
			"with more replicas in a region, zone, node or device than an even spread allows).",
		Args: usageArgs(1, 1, "cairn ring rebalance BUILDER"),
	}
	cmd.Flags().Uint64Var(&seed, "seed", 0, "choices between equally good devices (default: from the builder's version)")
	cmd.Flags().StringVar(&now, "now", "", "the time to rebalance at, RFC 3339 (default: now)")
	cmd.Flags().MarkHidden("now")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		at := time.Now()
		if now != "" {
			t, err := time.Parse(time.RFC3339, now)
			if err != nil {
				return fmt.Errorf("--now: %v", err)
			}
			at = t
		}
		b, err := ring.LoadBuilder(args[0])
		if err != nil {
			return ringError(err)
		}
		if !cmd.Flags().Changed("seed") {
			seed = uint64(b.Version)
		}
		res, err := b.Rebalance(at, seed)
		if err != nil {
			return ringError(err)
		}
		out := cmd.OutOrStdout()
		if res.Moved == 0 && res.RemovedDevices == 0 {
			fmt.Fprintf(out, "nothing moved; balance %.2f, dispersion %.2f\n", res.Balance, res.Dispersion)
		} else {
			if err := b.Save(args[0]); err != nil {
				return err
			}
			fmt.Fprintf(out, "moved %d partition-replicas (%d partitions); balance %.2f, dispersion %.2f; version %d\n", res.Moved, res.PartsMoved, res.Balance, res.Dispersion, b.Version)
		}
		if res.RemovedDevices > 0 {
			fmt.Fprintf(out, "removed %d devices\n", res.RemovedDevices)
		}
		if res.Pending > 0 {
			fmt.Fprintf(out, "%d partition-replicas wait for min_part_hours (%d h) to move: rebalance again after that\n", res.Pending, b.MinPartHours)
		}
		return nil
	}
	return cmd
}

func newRingPretendCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "pretend-min-part-hours-passed BUILDER",
		Short: "Let every partition move at the next rebalance (when a disk failed and data must move now)",
		Args:  usageArgs(1, 1, "cairn ring pretend-min-part-hours-passed BUILDER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return editBuilder(args[0], func(b *ring.Builder) error {
				b.ForgetMoves()
				fmt.Fprintln(cmd.OutOrStdout(), "every partition may move at the next rebalance")
				return nil
			})
		},
	}
}

func newRingChangeDoneCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "change-done BUILDER",
		Short: "Say the last rebalance's change is complete (its ring is on every node, replication has moved the data): proxies stop keeping quorums of the ring before it",
		Args:  usageArgs(1, 1, "cairn ring change-done BUILDER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return editBuilder(args[0], func(b *ring.Builder) error {
				if !b.EndChange(time.Now()) {
					fmt.Fprintln(cmd.OutOrStdout(), "no change under way")
					return nil
				}
				fmt.Fprintln(cmd.OutOrStdout(), "the last change is complete: write the rings and copy them to every node")
				return nil
			})
		},
	}
}

// ringShow is `cairn ring show --json`.
type ringShow struct {
	File         string `json:"file"`
	Kind         string `json:"kind"` // builder or ring
	Version      int64  `json:"version"`
	PartPower    uint   `json:"part_power"`
	MinPartHours *int   `json:"min_part_hours,omitempty"`
	Rebalanced   bool   `json:"rebalanced"`
	Checksum     string `json:"checksum,omitempty"`
	// The last rebalance's change: how many partitions moved a replica, and until when
	// proxies keep quorums of the rings before and after it (docs/consistency.md).
	ChangedParts int        `json:"changed_partitions,omitempty"`
	ChangeUntil  *time.Time `json:"change_until,omitempty"`
	Stats        ring.Stats `json:"stats"`
	Removed      []int      `json:"removed_at_next_rebalance,omitempty"`
	Regions      int        `json:"regions"`
	Zones        int        `json:"zones"`
	Nodes        int        `json:"nodes"`
}

func newRingShowCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show BUILDER|RINGFILE [--json]",
		Short: "Show devices, partitions per device, balance and dispersion per tier",
		Args:  usageArgs(1, 1, "cairn ring show BUILDER|RINGFILE [--json]"),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON, for scripts")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		sh, err := loadShow(args[0])
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(cmd.OutOrStdout(), sh)
		}
		return printShow(cmd.OutOrStdout(), sh)
	}
	return cmd
}

func loadShow(path string) (*ringShow, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sh := &ringShow{File: path}
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) { // gzip: a ring file
		r, err := ring.Load(path)
		if err != nil {
			return nil, ringError(err)
		}
		sh.Kind, sh.Version, sh.PartPower, sh.Rebalanced, sh.Checksum = "ring", r.Version, r.PartPower, true, r.Checksum()
		sh.Stats = r.Stats()
		showChange(sh, r)
		return countTiers(sh), nil
	}
	b, err := ring.UnmarshalBuilder(data)
	if err != nil {
		return nil, ringError(fmt.Errorf("%s: %w", path, err))
	}
	sh.Kind, sh.Version, sh.PartPower, sh.MinPartHours = "builder", b.Version, b.PartPower, &b.MinPartHours
	for _, d := range b.Devices {
		if d.Removed {
			sh.Removed = append(sh.Removed, d.ID)
		}
	}
	if r, err := b.Ring(); err == nil {
		sh.Rebalanced = true
		sh.Stats = r.Stats()
		showChange(sh, r)
	} else {
		// Never rebalanced: the devices, holding nothing yet.
		sh.Stats = ring.Stats{Partitions: b.Partitions(), Replicas: float64(b.Replicas)}
		for _, d := range b.Devices {
			sh.Stats.Devices = append(sh.Stats.Devices, ring.DeviceStats{Device: d.Device})
		}
	}
	return countTiers(sh), nil
}

func showChange(sh *ringShow, r *ring.Ring) {
	if r.Change != nil {
		until := r.Change.Until
		sh.ChangeUntil, sh.ChangedParts = &until, r.ChangedPartitions()
	}
}

func countTiers(sh *ringShow) *ringShow {
	regions, zones, nodes := map[int]bool{}, map[[2]int]bool{}, map[string]bool{}
	for _, d := range sh.Stats.Devices {
		regions[d.Region] = true
		zones[[2]int{d.Region, d.Zone}] = true
		nodes[fmt.Sprint(d.Region, d.Zone, d.Node)] = true
	}
	sh.Regions, sh.Zones, sh.Nodes = len(regions), len(zones), len(nodes)
	return sh
}

func printShow(out io.Writer, sh *ringShow) error {
	st := &sh.Stats
	fmt.Fprintf(out, "%s (%s): version %d, %d partitions (power %d), %g replicas", sh.File, sh.Kind, sh.Version, st.Partitions, sh.PartPower, st.Replicas)
	if sh.MinPartHours != nil {
		fmt.Fprintf(out, ", min_part_hours %d", *sh.MinPartHours)
	}
	fmt.Fprintf(out, "\n%d devices in %d regions, %d zones, %d nodes\n", len(st.Devices), sh.Regions, sh.Zones, sh.Nodes)
	if sh.Checksum != "" {
		fmt.Fprintf(out, "checksum %s\n", sh.Checksum)
	}
	if sh.ChangeUntil != nil {
		state := "complete"
		if time.Now().Before(*sh.ChangeUntil) {
			state = "under way: push this ring to every node and proxy before then"
		}
		fmt.Fprintf(out, "last change: %d partitions moved a replica; until %s %s\n", sh.ChangedParts, sh.ChangeUntil.Format(time.RFC3339), state)
	}
	if !sh.Rebalanced {
		fmt.Fprintln(out, "not rebalanced yet: run cairn ring rebalance")
	} else {
		var tiers []string
		for _, t := range st.Tiers {
			tiers = append(tiers, fmt.Sprintf("%s %.2f", t.Tier, t.Dispersion))
		}
		fmt.Fprintf(out, "balance %.2f, dispersion %.2f (%s)\n", st.Balance, st.Dispersion, strings.Join(tiers, ", "))
	}
	removed := map[int]bool{}
	for _, id := range sh.Removed {
		removed[id] = true
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ID\tREGION\tZONE\tNODE\tDEVICE\tWEIGHT\tPARTS\tWANTED\tBALANCE\tFLAGS\tMETA\t")
	for _, d := range st.Devices {
		flags := ""
		if removed[d.ID] {
			flags = "removing"
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%g\t%d\t%.1f\t%.2f\t%s\t%s\t\n", d.ID, d.Region, d.Zone, d.Node, d.Name, d.Weight, d.Parts, d.Wanted, d.Balance, flags, d.Meta)
	}
	return tw.Flush()
}

func newRingWriteCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "write BUILDER RINGDIR",
		Short: "Write the ring file servers read: RINGDIR/<BUILDER without .builder>.ring.gz",
		Long: "Write the ring of a builder as RINGDIR/NAME.ring.gz (NAME: the builder's file name\n" +
			"without .builder), atomically (a temporary file, fsynced, renamed, the directory\n" +
			"fsynced). The file is in Swift's ring format with Cairn's checksum and the builder's\n" +
			"version; running servers reload it within their reload interval. Copy it to every node.",
		Args: usageArgs(2, 2, "cairn ring write BUILDER RINGDIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := ring.LoadBuilder(args[0])
			if err != nil {
				return ringError(err)
			}
			r, err := b.Ring()
			if err != nil {
				return ringError(err)
			}
			if err := os.MkdirAll(args[1], 0o755); err != nil {
				return err
			}
			name := strings.TrimSuffix(filepath.Base(args[0]), ".builder") + ".ring.gz"
			path := filepath.Join(args[1], name)
			if old, err := ring.Load(path); err == nil && old.Checksum() == r.Checksum() {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is up to date (version %d)\n", path, r.Version)
				return nil
			} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(cmd.ErrOrStderr(), "replacing %s, which does not load: %v\n", path, err)
			}
			if err := ring.WriteFile(path, r); err != nil {
				return ringError(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: version %d, %d partitions, %d replicas, %d devices, %s\n", path, r.Version, r.Partitions(), r.Replicas(), len(r.Devices), r.Checksum())
			return nil
		},
	}
}
