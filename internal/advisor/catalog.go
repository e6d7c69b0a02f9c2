package advisor

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrInvalidCatalog is wrapped by every catalog problem Validate or LoadCatalog reports.
var ErrInvalidCatalog = errors.New("invalid catalog")

// CatalogSchema is the catalog format version this build reads.
const CatalogSchema = 1

//go:embed catalog.example.yaml
var exampleCatalog []byte

// ExampleCatalog is the example catalog shipped with Cairn (docs/advisor.md documents every
// field), as YAML: what `cairn advisor catalog` prints.
func ExampleCatalog() []byte { return bytes.Clone(exampleCatalog) }

// Role is what a node of a type may be used as.
type Role string

// Roles. A sumo node runs the proxy and the storage roles on one machine (seed 000's "sumo
// nodes"): its CPU and NICs serve both.
const (
	RoleProxy   Role = "proxy"
	RoleStorage Role = "storage"
	RoleSumo    Role = "sumo"
)

// Catalog is the hardware one may buy: the search picks among these and nothing else.
type Catalog struct {
	Schema   int    `yaml:"schema"`
	Currency string `yaml:"currency"`
	// Years is the cost horizon: a part costs its price plus Years × its yearly cost (power,
	// space, administration). 0 counts the purchase price only, as seed 000 does.
	Years         float64        `yaml:"years"`
	NodeTypes     []NodeType     `yaml:"node_types"`
	DiskTypes     []DiskType     `yaml:"disk_types"`
	LoadBalancers []LoadBalancer `yaml:"load_balancers"`
	Limits        Limits         `yaml:"limits"`
}

// NodeType is a server model.
type NodeType struct {
	Name  string `yaml:"name"`
	Cores int    `yaml:"cores"`
	// CPUSpeed is the speed of one core relative to a core of the machine the demands were
	// measured on (1.0: as fast). CPU seconds per request are divided by it.
	CPUSpeed  float64 `yaml:"cpu_speed"`
	MemoryGiB float64 `yaml:"memory_gib"` // recorded and printed; not modelled (page cache)
	// NICs are the network options of the type; the search tries each. A node's bandwidth is
	// Count × Gbps in each direction (full duplex).
	NICs      []NIC `yaml:"nics"`
	DiskSlots int   `yaml:"disk_slots"`
	// ControllerMBps caps the disk bytes per second of the node (HBA, backplane, bus); 0 is no
	// cap beyond the disks themselves.
	ControllerMBps float64 `yaml:"controller_mbps"`
	Price          float64 `yaml:"price"`
	YearlyCost     float64 `yaml:"yearly_cost"`
	// Roles the type may take; empty means all three.
	Roles []Role `yaml:"roles"`
}

// NIC is one network option of a node type: Count ports of Gbps each, for Price on top of the
// node's.
type NIC struct {
	Name  string  `yaml:"name"`
	Gbps  float64 `yaml:"gbps"`
	Count int     `yaml:"count"`
	Price float64 `yaml:"price"`
}

// DiskType is a drive model.
type DiskType struct {
	Name       string  `yaml:"name"`
	CapacityTB float64 `yaml:"capacity_tb"` // decimal terabytes, as drives are sold
	// IOPS is random operations per second (reads, writes and fsyncs alike); MBps sequential
	// megabytes (10^6) per second.
	IOPS       float64 `yaml:"iops"`
	MBps       float64 `yaml:"mbps"`
	Price      float64 `yaml:"price"`
	YearlyCost float64 `yaml:"yearly_cost"`
}

// LoadBalancer is a load-balancer model; several in parallel split the clients among them
// (seed 001's "2 Eight").
type LoadBalancer struct {
	Name string  `yaml:"name"`
	Gbps float64 `yaml:"gbps"` // each direction
	// RequestsPerSecond is what it forwards at most (a software balancer's CPU); 0: no cap.
	RequestsPerSecond float64 `yaml:"requests_per_second"`
	Price             float64 `yaml:"price"`
	YearlyCost        float64 `yaml:"yearly_cost"`
}

// Limits bound the search.
type Limits struct {
	MaxProxies       int `yaml:"max_proxies"`        // default 64
	MaxStorageNodes  int `yaml:"max_storage_nodes"`  // default 1024
	MaxLoadBalancers int `yaml:"max_load_balancers"` // default 8
}

// Defaults of Limits.
const (
	DefaultMaxProxies       = 64
	DefaultMaxStorageNodes  = 1024
	DefaultMaxLoadBalancers = 8
)

// LoadCatalog reads and validates the catalog file at path.
func LoadCatalog(path string) (*Catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading catalog: %w", err)
	}
	return ParseCatalog(path, data)
}

// ParseCatalog decodes a catalog strictly (a misspelt field is an error, not a silent zero),
// fills in defaults and validates it.
func ParseCatalog(name string, data []byte) (*Catalog, error) {
	c := &Catalog{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		// yaml's messages can span lines ("yaml: unmarshal errors:\n  line 3: ..."); keep one.
		msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
		return nil, fmt.Errorf("%s: %w: %s", name, ErrInvalidCatalog, msg)
	}
	c.setDefaults()
	if err := joinProblems(ErrInvalidCatalog, name, c.problems()); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Catalog) setDefaults() {
	if c.Currency == "" {
		c.Currency = "USD"
	}
	for i := range c.NodeTypes {
		n := &c.NodeTypes[i]
		if n.CPUSpeed == 0 {
			n.CPUSpeed = 1
		}
		if len(n.Roles) == 0 {
			n.Roles = []Role{RoleProxy, RoleStorage, RoleSumo}
		}
	}
	if c.Limits.MaxProxies == 0 {
		c.Limits.MaxProxies = DefaultMaxProxies
	}
	if c.Limits.MaxStorageNodes == 0 {
		c.Limits.MaxStorageNodes = DefaultMaxStorageNodes
	}
	if c.Limits.MaxLoadBalancers == 0 {
		c.Limits.MaxLoadBalancers = DefaultMaxLoadBalancers
	}
}

// Validate reports every problem of the catalog, one line each, all wrapping
// ErrInvalidCatalog. Call it after defaults are set (ParseCatalog does both).
func (c *Catalog) Validate() error { return joinProblems(ErrInvalidCatalog, "", c.problems()) }

func (c *Catalog) problems() []string {
	var probs []string
	bad := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	if c.Schema != CatalogSchema {
		bad("schema: is %d, this build reads %d", c.Schema, CatalogSchema)
	}
	if c.Years < 0 {
		bad("years: must not be negative")
	}
	if len(c.NodeTypes) == 0 {
		bad("node_types: none listed")
	}
	if len(c.DiskTypes) == 0 {
		bad("disk_types: none listed")
	}
	names := map[string]bool{}
	unique := func(where, name string) {
		if name == "" {
			bad("%s: name is empty", where)
		} else if names[name] {
			bad("%s: name %q is used twice", where, name)
		}
		names[name] = true
	}
	var proxy, storage bool
	for i, n := range c.NodeTypes {
		w := fmt.Sprintf("node_types[%d] (%s)", i, n.Name)
		unique(w, n.Name)
		if n.Cores <= 0 {
			bad("%s: cores must be > 0", w)
		}
		if n.CPUSpeed <= 0 {
			bad("%s: cpu_speed must be > 0", w)
		}
		if n.MemoryGiB < 0 {
			bad("%s: memory_gib must not be negative", w)
		}
		if len(n.NICs) == 0 {
			bad("%s: nics: none listed", w)
		}
		for j, nic := range n.NICs {
			if nic.Gbps <= 0 || nic.Count <= 0 {
				bad("%s: nics[%d]: gbps and count must be > 0", w, j)
			}
			if nic.Price < 0 {
				bad("%s: nics[%d]: price must not be negative", w, j)
			}
		}
		if n.DiskSlots < 0 {
			bad("%s: disk_slots must not be negative", w)
		}
		if n.ControllerMBps < 0 {
			bad("%s: controller_mbps must not be negative", w)
		}
		if n.Price <= 0 {
			bad("%s: price must be > 0", w)
		}
		if n.YearlyCost < 0 {
			bad("%s: yearly_cost must not be negative", w)
		}
		for _, r := range n.Roles {
			switch r {
			case RoleProxy:
				proxy = true
			case RoleStorage:
				storage = true
			case RoleSumo:
				proxy, storage = true, true
			default:
				bad("%s: roles: unknown role %q (proxy, storage, sumo)", w, r)
			}
		}
		if (n.canStore()) && n.DiskSlots == 0 {
			bad("%s: disk_slots is 0 but the type may store objects (roles storage or sumo)", w)
		}
	}
	if len(c.NodeTypes) > 0 && !proxy {
		bad("node_types: no type may be a proxy (roles proxy or sumo)")
	}
	if len(c.NodeTypes) > 0 && !storage {
		bad("node_types: no type may store objects (roles storage or sumo)")
	}
	for i, d := range c.DiskTypes {
		w := fmt.Sprintf("disk_types[%d] (%s)", i, d.Name)
		unique(w, d.Name)
		if d.CapacityTB <= 0 {
			bad("%s: capacity_tb must be > 0", w)
		}
		if d.IOPS <= 0 {
			bad("%s: iops must be > 0", w)
		}
		if d.MBps <= 0 {
			bad("%s: mbps must be > 0", w)
		}
		if d.Price <= 0 {
			bad("%s: price must be > 0", w)
		}
		if d.YearlyCost < 0 {
			bad("%s: yearly_cost must not be negative", w)
		}
	}
	for i, l := range c.LoadBalancers {
		w := fmt.Sprintf("load_balancers[%d] (%s)", i, l.Name)
		unique(w, l.Name)
		if l.Gbps <= 0 {
			bad("%s: gbps must be > 0", w)
		}
		if l.RequestsPerSecond < 0 {
			bad("%s: requests_per_second must not be negative", w)
		}
		if l.Price <= 0 {
			bad("%s: price must be > 0", w)
		}
		if l.YearlyCost < 0 {
			bad("%s: yearly_cost must not be negative", w)
		}
	}
	if c.Limits.MaxProxies < 1 || c.Limits.MaxStorageNodes < 1 || c.Limits.MaxLoadBalancers < 1 {
		bad("limits: every maximum must be ≥ 1")
	}
	return probs
}

// joinProblems makes one error of many problems: one line each, "file: sentinel: problem",
// every line wrapping sentinel, so that a reader sees all of them at once and a caller can
// still test errors.Is.
func joinProblems(sentinel error, file string, probs []string) error {
	if len(probs) == 0 {
		return nil
	}
	errs := make([]error, len(probs))
	for i, p := range probs {
		if file != "" {
			errs[i] = fmt.Errorf("%s: %w: %s", file, sentinel, p)
		} else {
			errs[i] = fmt.Errorf("%w: %s", sentinel, p)
		}
	}
	return errors.Join(errs...)
}

func (n *NodeType) has(r Role) bool { return slices.Contains(n.Roles, r) }

func (n *NodeType) canStore() bool { return n.has(RoleStorage) || n.has(RoleSumo) }

// partCost is what one part costs over the catalog's horizon.
func (c *Catalog) partCost(price, yearly float64) float64 { return price + c.Years*yearly }

// Example catalog and the tests share this lookup.
func (c *Catalog) nodeType(name string) *NodeType {
	for i := range c.NodeTypes {
		if c.NodeTypes[i].Name == name {
			return &c.NodeTypes[i]
		}
	}
	return nil
}

func (c *Catalog) diskType(name string) *DiskType {
	for i := range c.DiskTypes {
		if c.DiskTypes[i].Name == name {
			return &c.DiskTypes[i]
		}
	}
	return nil
}

func (c *Catalog) loadBalancer(name string) *LoadBalancer {
	for i := range c.LoadBalancers {
		if c.LoadBalancers[i].Name == name {
			return &c.LoadBalancers[i]
		}
	}
	return nil
}
