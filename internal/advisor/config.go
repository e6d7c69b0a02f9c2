package advisor

import "math"

// Config is one configuration the search proposes: what to buy, what it costs and what the
// model predicts of it.
type Config struct {
	Topology      string      `json:"topology"` // "proxy+storage" or "sumo"
	Groups        []GroupSpec `json:"groups"`
	LoadBalancer  string      `json:"load_balancer,omitempty"`
	LoadBalancers int         `json:"load_balancers"`
	Policy        Policy      `json:"policy"`
	// PartPower is the ring's partition power: at least 100 partitions per device, Swift's
	// rule of thumb, so that partitions spread evenly and rebalance in small steps.
	PartPower  int        `json:"part_power"`
	Cost       Cost       `json:"cost"`
	RawTB      float64    `json:"raw_tb"`
	UsableTB   float64    `json:"usable_tb"`
	Prediction Prediction `json:"prediction"`

	cluster Cluster
}

// GroupSpec is a group of identical nodes in a Config.
type GroupSpec struct {
	Role         string  `json:"role"` // proxy, storage, sumo
	NodeType     string  `json:"node_type"`
	Count        int     `json:"count"`
	Cores        int     `json:"cores_per_node"`
	NIC          string  `json:"nic"`
	NICGbps      float64 `json:"nic_gbps_per_node"`
	Disk         string  `json:"disk,omitempty"`
	DisksPerNode int     `json:"disks_per_node,omitempty"`
	ListingDisk  string  `json:"listing_disk,omitempty"`
}

// Cost is what a Config costs over the catalog's horizon.
type Cost struct {
	Currency string  `json:"currency"`
	Purchase float64 `json:"purchase"`
	Yearly   float64 `json:"yearly"`
	Years    float64 `json:"years"`
	Total    float64 `json:"total"` // Purchase + Years × Yearly
}

// nodeCost is the purchase and yearly cost of one node of g.
func nodeCost(g *Group) (price, yearly float64) {
	price, yearly = g.Type.Price+g.NIC.Price, g.Type.YearlyCost
	if g.Storage && g.Disk != nil {
		price += float64(g.DisksPerNode) * g.Disk.Price
		yearly += float64(g.DisksPerNode) * g.Disk.YearlyCost
	}
	if l := g.ListingDisk; l != nil && g.Storage {
		price += l.Price
		yearly += l.YearlyCost
	}
	return price, yearly
}

func clusterCost(cat *Catalog, cl *Cluster) Cost {
	c := Cost{Currency: cat.Currency, Years: cat.Years}
	for i := range cl.Groups {
		p, y := nodeCost(&cl.Groups[i])
		c.Purchase += float64(cl.Groups[i].Count) * p
		c.Yearly += float64(cl.Groups[i].Count) * y
	}
	if cl.LB != nil {
		c.Purchase += float64(cl.LBCount) * cl.LB.Price
		c.Yearly += float64(cl.LBCount) * cl.LB.YearlyCost
	}
	c.Total = c.Purchase + c.Years*c.Yearly
	return c
}

// partPower is the smallest P with 2^P ≥ 100 partitions per device.
func partPower(devices int) int {
	if devices < 1 {
		return 0
	}
	return max(1, int(math.Ceil(math.Log2(float64(devices)*100))))
}

// makeConfig describes cl with its prediction at the operating point at (0: rated).
func makeConfig(cat *Catalog, m *Model, cl Cluster, at float64) Config {
	c := Config{Topology: "proxy+storage", cluster: cl, Policy: m.Policy, LoadBalancers: cl.LBCount}
	if cl.LB != nil {
		c.LoadBalancer = cl.LB.Name
	}
	devices := 0
	for _, g := range cl.Groups {
		if g.Proxy && g.Storage {
			c.Topology = "sumo"
		}
		gs := GroupSpec{Role: g.tier(), NodeType: g.Type.Name, Count: g.Count, Cores: g.Type.Cores,
			NIC: g.NIC.Name, NICGbps: g.NIC.Gbps * float64(g.NIC.Count)}
		if g.Storage && g.Disk != nil {
			gs.Disk, gs.DisksPerNode = g.Disk.Name, g.DisksPerNode
			devices += g.Count * g.DisksPerNode
			c.RawTB += float64(g.Count) * g.rawTB()
			if g.ListingDisk != nil {
				gs.ListingDisk = g.ListingDisk.Name
			}
		}
		c.Groups = append(c.Groups, gs)
	}
	c.UsableTB = c.RawTB * m.Options.Fill / m.Policy.Overhead()
	c.PartPower = partPower(devices)
	c.Cost = clusterCost(cat, &cl)
	c.Prediction = m.Predict(&c.cluster, at)
	return c
}
