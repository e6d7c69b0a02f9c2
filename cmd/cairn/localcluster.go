package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cairn-store/cairn/internal/localcluster"
)

// `cairn local-cluster`: a whole cluster on this machine's loopback, for trying a cluster and
// for tests (internal/localcluster). It takes `cairn server`'s flags and passes every one it
// does not own itself to the nodes.
func newLocalClusterCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "local-cluster [--storage N] [--proxies N] [--sumo N] [--replicas N] [--part-power P] [--policies NAME[:K+M][@FIRST-LAST],...] [--data DIR] [--listen HOST:PORT] [--node-logs files|terminal] [cairn server flags]",
		Short: "Run a whole cluster on this machine: storage, proxy and sumo nodes as separate processes on loopback",
		Long: "Builds the rings for the storage nodes on first start (DIR/rings), starts each node as a\n" +
			"`cairn server --role` process with its data in DIR/NAME and its log in DIR/NAME.log, and\n" +
			"serves clients on --listen (through a round-robin balancer when more than one node serves\n" +
			"clients). Started again on the same DIR it is the same cluster. Other flags are `cairn\n" +
			"server` flags, passed to every node. Defaults: 4 storage nodes, 1 proxy, 3 replicas.\n" +
			"--policies gold,silver makes storage policies 0 (gold, the default) and 1 (silver), each\n" +
			"with its object ring over a device of its own on every storage node; NAME:K+M makes an\n" +
			"erasure-coded policy of K data and M parity fragments (ec_type cairn_rs, one fragment per\n" +
			"storage node: at least K+M of them), e.g. --storage 8 --policies gold,ec42:4+2.\n" +
			"@FIRST-LAST puts a policy's ring on those storage nodes alone (from 1), as a microstore's\n" +
			"policy has nodes of its own: --storage 6 --policies gold@1-3,silver@4-6.\n" +
			"It prints the endpoints, the root access key and where its secret is; the nodes' logs go to\n" +
			"DIR/NAME.log (--node-logs terminal also shows them here).",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLocalCluster(cmd, args)
		},
	}
}

// localClusterFlags are the flags local-cluster keeps for itself, with their defaults.
var localClusterFlags = map[string]string{
	"storage": "", "proxies": "", "sumo": "", "replicas": "", "part-power": "", "policies": "",
	"data": "cairn-cluster", "listen": "127.0.0.1:8787", "root-access-key": "", "root-secret-key": "",
	"node-logs": "files",
}

func runLocalCluster(cmd *cobra.Command, args []string) error {
	own, pass, help, err := splitLocalClusterArgs(args)
	if err != nil {
		return err
	}
	if help {
		return cmd.Help()
	}
	ints := map[string]int{}
	for _, k := range []string{"storage", "proxies", "sumo", "replicas", "part-power"} {
		if own[k] == "" {
			continue
		}
		if ints[k], err = strconv.Atoi(own[k]); err != nil || ints[k] < 0 {
			return fmt.Errorf("--%s: want a number, 0 or more", k)
		}
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(own["data"])
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ak, sk := own["root-access-key"], own["root-secret-key"]
	if (ak == "") != (sk == "") {
		return errors.New("give both --root-access-key and --root-secret-key, or neither")
	}
	secretFrom := "as given by --root-secret-key"
	if ak == "" {
		if ak, sk, err = localClusterRootKey(cmd, dir); err != nil {
			return err
		}
		secretFrom = filepath.Join(dir, "root-credentials.json")
	}
	var policies []string
	if own["policies"] != "" {
		for _, n := range strings.Split(own["policies"], ",") {
			policies = append(policies, strings.TrimSpace(n))
		}
	}
	var nodeOutput io.Writer // the nodes' logs go to their files only
	switch own["node-logs"] {
	case "files":
	case "terminal":
		nodeOutput = cmd.ErrOrStderr()
	default:
		return fmt.Errorf("--node-logs %q: want files or terminal", own["node-logs"])
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := localcluster.Start(ctx, localcluster.Config{
		Binary: bin, Dir: dir, Listen: own["listen"],
		Storage: ints["storage"], Proxies: ints["proxies"], Sumo: ints["sumo"], Replicas: ints["replicas"], PartPower: uint(ints["part-power"]),
		Policies: policies, RootAccessKey: ak, RootSecretKey: sk, Args: pass, Output: nodeOutput,
	})
	if err != nil {
		return err
	}
	// The terminal shows where things are; the nodes' logs are in their files.
	out := cmd.OutOrStdout()
	for _, n := range c.Nodes {
		fmt.Fprintf(out, "cairn: %s node %s at %s (log %s.log)\n", n.Role, n.Name, n.Endpoint(), n.DataDir)
	}
	fmt.Fprintf(out, "cairn: Swift auth %s/auth/v1.0 (user root:root, the root secret key as its key)\n", c.Endpoint)
	fmt.Fprintf(out, "cairn: S3 endpoint %s\n", c.Endpoint)
	fmt.Fprintf(out, "cairn: root access key %s; its secret key: %s\n", ak, secretFrom)
	fmt.Fprintf(out, "cairn: the nodes' logs: %s/*.log (tail -f them to follow)\n", dir)
	fmt.Fprintf(out, "cairn: for cairn put/get/ls and the admin commands:\n  export CAIRN_ENDPOINT=%s CAIRN_ACCESS_KEY=%s\n", c.Endpoint, ak)
	if secretFrom != "as given by --root-secret-key" {
		fmt.Fprintf(out, "  export CAIRN_SECRET_KEY=$(sed -E 's/.*\"secret_key\":\"([^\"]*)\".*/\\1/' %s)\n", secretFrom)
	}
	<-ctx.Done()
	return c.Close()
}

// splitLocalClusterArgs separates local-cluster's own flags (with their defaults filled in)
// from those passed to the nodes.
func splitLocalClusterArgs(args []string) (own map[string]string, pass []string, help bool, err error) {
	own = map[string]string{}
	for k, v := range localClusterFlags {
		own[k] = v
	}
	for k := range own {
		if v, ok := os.LookupEnv("CAIRN_" + strings.ToUpper(strings.ReplaceAll(k, "-", "_"))); ok {
			own[k] = v
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-h" || a == "--help" {
			return nil, nil, true, nil
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if _, mine := localClusterFlags[name]; !mine || !strings.HasPrefix(a, "--") {
			pass = append(pass, a)
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, nil, false, fmt.Errorf("--%s needs a value", name)
			}
			i++
			value = args[i]
		}
		own[name] = value
	}
	return own, pass, false, nil
}

// localClusterRootKey returns the cluster's root key, generated on first start and kept in
// DIR/root-credentials.json (mode 0600) as a single server keeps its own.
func localClusterRootKey(cmd *cobra.Command, dir string) (string, string, error) {
	path := filepath.Join(dir, "root-credentials.json")
	var k struct {
		AccessKey string `json:"access_key"`
		SecretKey string `json:"secret_key"`
	}
	data, err := os.ReadFile(path)
	if err == nil {
		if err := json.Unmarshal(data, &k); err != nil || k.AccessKey == "" || k.SecretKey == "" {
			return "", "", fmt.Errorf("%s: not a root key", path)
		}
		return k.AccessKey, k.SecretKey, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", "", err
	}
	k.AccessKey, k.SecretKey = "CAIRN"+strings.ToUpper(rand.Text()[:15]), rand.Text()+rand.Text()[:14]
	if data, err = json.Marshal(k); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", "", err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "cairn: generated the root key (shown once; kept in %s):\n  access key: %s\n  secret key: %s\n", dir, k.AccessKey, k.SecretKey)
	return k.AccessKey, k.SecretKey, nil
}
