package advisor

import (
	"testing"
)

// The seeds' findings, reproduced from the model and the shipped demands on the example
// catalog. docs/advisor.md shows the same curves from the command line.

// Seed 000, sampling: for a proxy type and a storage node type, the cost per MB/s of a 1:N
// cluster falls while storage nodes are the bottleneck (the proxy idles), and rises once the
// proxy is (storage nodes idle): the lowest is a sweet spot N strictly inside the range.
func TestFindingSweetSpot(t *testing.T) {
	for name, d := range demandSets(t) {
		t.Run(name, func(t *testing.T) {
			cat := loadExample(t)
			m := modelWith(t, d, "D", threeReplicas) // seed 000 sampled with backups (Amanda): large PUTs
			pc := cluster(cat, "proxy-1u", 1, "storage-1u-4", 1, 4, "hdd-8t", "", 0)
			pts, sweet := m.Sample(cat, pc.Groups[0], pc.Groups[1], nil, 0, 40)
			first, last := pts[0], pts[len(pts)-1]
			if sweet <= first.Storage || sweet >= last.Storage {
				t.Fatalf("sweet spot N = %d, want strictly between %d and %d", sweet, first.Storage, last.Storage)
			}
			for _, p := range pts {
				switch {
				case p.Storage < sweet && p.BottleneckAt != "storage":
					t.Errorf("N = %d below the sweet spot is bound by %s, want storage", p.Storage, p.BottleneckAt)
				case p.Storage > sweet && p.BottleneckAt != "proxy":
					t.Errorf("N = %d above the sweet spot is bound by %s, want proxy", p.Storage, p.BottleneckAt)
				}
			}
			at := pts[sweet-first.Storage]
			if at.CostPerMBps >= first.CostPerMBps || at.CostPerMBps >= last.CostPerMBps {
				t.Errorf("cost per MB/s at N=%d %.1f, at N=%d %.1f, at N=%d %.1f", sweet, at.CostPerMBps, first.Storage, first.CostPerMBps, last.Storage, last.CostPerMBps)
			}
			t.Logf("1 proxy-1u : N storage-1u-4 (4 × hdd-8t), workload D: sweet spot N = %d at %.1f USD per MB/s", sweet, at.CostPerMBps)
		})
	}
}

// Seed 001: c:cN clusters behind one balancer stop scaling at its bandwidth; with two they
// scale further.
func TestFindingLoadBalancerCap(t *testing.T) {
	for name, d := range demandSets(t) {
		t.Run(name, func(t *testing.T) {
			cat := loadExample(t)
			m := modelWith(t, d, "D", threeReplicas)
			pc := cluster(cat, "proxy-1u", 1, "storage-1u-4", 1, 4, "hdd-8t", "haproxy-10g", 1)
			_, n := m.Sample(cat, pc.Groups[0], pc.Groups[1], nil, 0, 40)
			lb := cat.loadBalancer("haproxy-10g")
			one := m.Profile(cat, &pc.Groups[0], pc.Groups[1], n, lb, 1, 8)
			two := m.Profile(cat, &pc.Groups[0], pc.Groups[1], n, lb, 2, 8)
			ceiling := m.MBps(m.perLBLimit(lb))
			capped := 0
			for i := range one {
				if one[i].MBps > ceiling*(1+1e-9) {
					t.Errorf("c=%d: %.0f MB/s through one balancer of %.0f MB/s", i+1, one[i].MBps, ceiling)
				}
				if one[i].BottleneckAt == "lb" {
					capped++
					if i+1 < len(one) && one[i+1].MBps != one[i].MBps {
						t.Errorf("c=%d: capped by the balancer, yet c=%d differs", i+1, i+2)
					}
				}
			}
			if capped == 0 {
				t.Fatalf("one balancer never capped the profile: %+v", one)
			}
			if top1, top2 := one[len(one)-1].MBps, two[len(two)-1].MBps; top2 < 1.9*top1 {
				t.Errorf("two balancers reach %.0f MB/s, one %.0f: want about twice", top2, top1)
			}
			t.Logf("1:%d profile, one haproxy-10g caps at %.0f MB/s from c=%d; two reach %.0f MB/s", n, ceiling, len(one)-capped+1, two[len(two)-1].MBps)
		})
	}
}

// Seed 004 (MOS), rules of thumb: proxy CPU bounds small objects, the network bounds large
// ones. For GETs and for PUTs of one size, as the size doubles from 1 KiB to 64 MiB, the
// proxy's bottleneck is its CPU up to a crossover size and its NIC from there on; the
// write-heavy pebbles of workload B are CPU-bound, the boulders of C and D NIC-bound.
func TestFindingProxyCPUSmallNICLarge(t *testing.T) {
	cat := loadExample(t)
	cl := cluster(cat, "proxy-1u", 1, "storage-4u-36", 32, 36, "ssd-3.84t", "", 0)
	for name, d := range demandSets(t) {
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct{ wl, want string }{{"B", "cpu"}, {"C", "nic out"}, {"D", "nic out"}} {
				p := modelWith(t, d, tc.wl, threeReplicas).Predict(cl, 0)
				if p.Bottleneck.Tier != "proxy" || p.Bottleneck.Resource != tc.want {
					t.Errorf("workload %s: bound by %s %s, want proxy %s", tc.wl, p.Bottleneck.Tier, p.Bottleneck.Resource, tc.want)
				}
			}
			for _, op := range []string{"get", "put"} {
				crossover := int64(0)
				for size := int64(1 << 10); size <= 64<<20; size *= 2 {
					w := &Workload{Name: op, Classes: []Class{{Op: op, Size: float64(size), Weight: 1}}}
					m, err := NewModel(d, w, threeReplicas, Options{})
					if err != nil {
						t.Fatal(err)
					}
					b := m.Predict(cl, 0).Bottleneck
					switch {
					case b.Tier != "proxy":
						t.Errorf("%s of %d bytes: bound by %s %s, want the proxy", op, size, b.Tier, b.Resource)
					case b.Resource == "cpu" && crossover != 0:
						t.Errorf("%s of %d bytes: CPU-bound again above the crossover at %d", op, size, crossover)
					case b.Resource != "cpu" && crossover == 0:
						crossover = size
					}
				}
				if crossover <= 1<<10 || crossover == 0 {
					t.Errorf("%s: crossover from CPU to NIC at %d bytes, want strictly inside 1 KiB … 64 MiB", op, crossover)
				}
				t.Logf("%s: proxy-1u (16 cores, 2 × 25 Gb/s) is CPU-bound below %d KiB, NIC-bound from there", op, crossover>>10)
			}
		})
	}
}

// Seed 000, pitfall 5: throughput rises with the disks in each storage node up to a turning
// point, where the node's NIC, CPU or controller takes over, and is flat after it.
func TestFindingDisksPerNodeTurningPoint(t *testing.T) {
	for name, d := range demandSets(t) {
		t.Run(name, func(t *testing.T) {
			cat := loadExample(t)
			m := modelWith(t, d, "D", threeReplicas)
			turn, prev := 0, 0.0
			for d := 1; d <= 36; d++ {
				p := m.Predict(cluster(cat, "proxy-1u-big", 4, "storage-4u-36", 6, d, "hdd-8t", "", 0), 0)
				if turn == 0 {
					if p.Bottleneck.Resource != "data disks" {
						turn = d
						t.Logf("turning point at %d disks per node: %s %s takes over at %.0f MB/s", d, p.Bottleneck.Tier, p.Bottleneck.Resource, p.MaxMBps)
					} else if d > 1 && p.MaxOpsPerSec <= prev {
						t.Errorf("%d disks: %.0f ops/s, not more than %d disks' %.0f", d, p.MaxOpsPerSec, d-1, prev)
					}
				} else if p.MaxOpsPerSec != prev {
					t.Errorf("%d disks, past the turning point: %.2f ops/s, want flat at %.2f", d, p.MaxOpsPerSec, prev)
				}
				prev = p.MaxOpsPerSec
			}
			if turn <= 1 || turn >= 36 {
				t.Errorf("turning point at %d disks, want strictly inside 1..36", turn)
			}
		})
	}
}

// Seed 002: a faster container-DB (listing) device pays off for small PUTs, not for large.
func TestFindingListingDevice(t *testing.T) {
	cat := loadExample(t)
	gain := func(wl string) float64 {
		m := model(t, wl, threeReplicas)
		st := cat.nodeType("storage-2u-12")
		g := Group{Type: st, NIC: st.NICs[1], Storage: true, Disk: cat.diskType("hdd-8t"), DisksPerNode: 11}
		plain := m.perNodeLimit(&g)
		g.ListingDisk = cat.diskType("ssd-3.84t")
		return m.perNodeLimit(&g) / plain
	}
	small, large := gain("B"), gain("D")
	if small < 1.2 || large > 1.05 {
		t.Errorf("an SSD listing device multiplies a storage node's throughput by %.2f on small PUTs (want ≥ 1.2) and %.2f on large (want ≤ 1.05)", small, large)
	}
	t.Logf("SSD listing device: ×%.2f for workload B, ×%.2f for workload D", small, large)
}

// OpenStack Swift's demands, measured by calibrate on the Swift test peer
// (testdata/demands.swift.yaml): its Python proxy spends several times Cairn's CPU per small
// request (10× per 4 KiB GET, 5× per PUT on the same machine), so on the same hardware a
// Swift cluster serving pebbles needs that many more proxies — seed 004's proxy CPU bound,
// sharper.
func TestFindingSwiftProxyCPU(t *testing.T) {
	swift, err := LoadDemands("testdata/demands.swift.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Cairn's measured on the same machine, in namespaces: dearer than loopback, where Swift
	// was measured, so the comparison leans Swift's way.
	cairn, err := LoadDemands("testdata/validate/demands.netns.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cat := loadExample(t)
	cl := cluster(cat, "proxy-1u", 1, "storage-4u-36", 32, 36, "ssd-3.84t", "", 0)
	ps := modelWith(t, swift, "B", threeReplicas).Predict(cl, 0)
	pc := modelWith(t, cairn, "B", threeReplicas).Predict(cl, 0)
	if ps.Bottleneck.Tier != "proxy" || ps.Bottleneck.Resource != "cpu" {
		t.Errorf("Swift, workload B: bound by %s %s, want proxy cpu", ps.Bottleneck.Tier, ps.Bottleneck.Resource)
	}
	if ratio := pc.MaxOpsPerSec / ps.MaxOpsPerSec; ratio < 3 {
		t.Errorf("one proxy-1u serves workload B at %.0f ops/s with Cairn's demands, %.0f with Swift's: want Cairn ≥ 3× (got %.1f×)", pc.MaxOpsPerSec, ps.MaxOpsPerSec, ratio)
	} else {
		t.Logf("workload B on 1 proxy-1u: Cairn %.0f ops/s, Swift %.0f ops/s (%.1f×)", pc.MaxOpsPerSec, ps.MaxOpsPerSec, ratio)
	}
}
