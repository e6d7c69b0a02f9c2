package advisor

import "math"

// Latency. Each resource on a request's path adds its service time, and each queue its
// waiting time:
//   - CPU cores are one pooled queue (M/M/c): W = C(c, a)·S̄ / (c·(1−U)), with C Erlang's C
//     formula, a = c·U, S̄ the mean service time of a visit;
//   - disks, listing devices and balancers' request engines are a queue per server (a request
//     goes to one disk; M/M/1 each): W = S̄·U / (1−U);
//   - bandwidth (NICs, controllers, balancers' links) is shared by the transfers in flight
//     (processor sharing): a transfer of service time S takes S / (1−U).
// A request's bytes stream through the balancer, the proxy's NIC, the storage node's NIC and
// the disk at once, so the transfers count once, by the slowest of them; CPU time, disk
// operations (seeks, fsyncs) and waits add up. A PUT's parallel visits to its replicas count
// as one visit. The p99 treats each class's response time as its fixed part plus an
// exponential with the mean of its waits (exact for one M/M/1 queue), and takes the 99th
// percentile of the mixture of classes. These are approximations: validate (issue 17) is
// what is to measure their error.

// erlangC is the probability that a request waits in an M/M/c queue with offered load a
// (in servers), by the Erlang B recursion; 1 when saturated.
func erlangC(c int, a float64) float64 {
	if c < 1 || a >= float64(c) {
		return 1
	}
	b := 1.0
	for k := 1; k <= c; k++ {
		b = a * b / (float64(k) + a*b)
	}
	rho := a / float64(c)
	return b / (1 - rho*(1-b))
}

// queueState is a resource's utilization and mean wait at one throughput.
type queueState struct {
	u, wait, slowdown float64
}

func stateAt(r *resource, x float64) queueState {
	if r.servers <= 0 || r.demand <= 0 {
		return queueState{slowdown: 1}
	}
	u := r.utilization(x)
	if u >= 1 {
		return queueState{u: u, wait: math.Inf(1), slowdown: math.Inf(1)}
	}
	s := queueState{u: u, slowdown: 1 / (1 - u)}
	if r.shared {
		return s
	}
	mean := r.demand / r.visits
	if r.pooled {
		c := int(r.servers)
		s.wait = erlangC(c, u*float64(c)) * mean / (float64(c) * (1 - u))
	} else {
		s.wait = mean * u / (1 - u)
	}
	return s
}

// path accumulates one class's response time.
type path struct {
	fixed, wait, stream float64
}

func (p *path) add(weight, fixed, wait float64) {
	p.fixed += weight * fixed
	p.wait += weight * wait
}

func (p *path) transfer(weight, secs, slowdown float64) {
	p.stream = math.Max(p.stream, weight*secs*slowdown)
}

// latency is the mean and the 99th percentile of response time, in seconds, at x requests/s.
func (m *Model) latency(cl *Cluster, rs []resource, x float64) (mean, p99 float64) {
	if x <= 0 {
		x = 0
	}
	type key struct {
		group int
		name  string
	}
	st := map[key]queueState{}
	for i := range rs {
		s := stateAt(&rs[i], x)
		if s.u >= 1 {
			return math.Inf(1), math.Inf(1)
		}
		st[key{rs[i].group, rs[i].name}] = s
	}
	ps, ss := cl.shares()
	base := m.Demands.BaseLatencyMs / 1000
	fixed := make([]float64, len(m.classes))
	waits := make([]float64, len(m.classes))
	for ci, c := range m.classes {
		var p path
		if cl.LB != nil && cl.LBCount > 0 {
			bw := st[key{-1, "bandwidth"}]
			p.transfer(1, math.Max(c.cliIn, c.cliOut)/(cl.LB.Gbps*1e9/bitsPerByte), bw.slowdown)
			if cl.LB.RequestsPerSecond > 0 {
				p.add(1, 1/cl.LB.RequestsPerSecond, st[key{-1, "requests"}].wait)
			}
		}
		for gi := range cl.Groups {
			g := &cl.Groups[gi]
			port := g.NIC.Gbps * 1e9 / bitsPerByte * float64(g.NIC.Count)
			cpu := st[key{gi, "cpu"}]
			nicSlow := math.Max(st[key{gi, "nic in"}].slowdown, st[key{gi, "nic out"}].slowdown)
			if w := ps[gi] * float64(g.Count); w > 0 {
				p.add(w, c.proxyCPU/g.Type.CPUSpeed, cpu.wait)
				p.transfer(w, math.Max(c.cliIn+c.visits*c.bIn, c.cliOut+c.visits*c.bOut)/port, nicSlow)
			}
			w := ss[gi] * float64(g.Count)
			if w <= 0 {
				continue
			}
			p.add(w, c.storCPU/g.Type.CPUSpeed, cpu.wait)
			p.transfer(w, math.Max(c.bOut, c.bIn)/port, nicSlow)
			d := g.Disk
			ops, bytes := c.dataOps, c.dataBytes
			if g.ListingDisk == nil {
				ops, bytes = ops+c.listOps, bytes+c.listBytes
			}
			p.add(w, ops/d.IOPS, st[key{gi, "data disks"}].wait)
			p.transfer(w, bytes/(d.MBps*1e6), 1)
			if l := g.ListingDisk; l != nil && c.listOps+c.listBytes > 0 {
				p.add(w, c.listOps/l.IOPS+c.listBytes/(l.MBps*1e6), st[key{gi, "listing disk"}].wait)
			}
			if g.Type.ControllerMBps > 0 {
				p.transfer(w, (c.dataBytes+c.listBytes)/(g.Type.ControllerMBps*1e6), st[key{gi, "controller"}].slowdown)
			}
		}
		fixed[ci] = base + p.fixed + p.stream
		waits[ci] = p.wait
		mean += c.weight * (fixed[ci] + waits[ci])
	}
	return mean, m.mixtureQuantile(fixed, waits, 0.99)
}

// mixtureQuantile is the q-quantile of a mixture of shifted exponentials: class i (weight
// from m.classes) takes fixed[i] plus an exponential of mean waits[i].
func (m *Model) mixtureQuantile(fixed, waits []float64, q float64) float64 {
	tail := func(t float64) float64 {
		var p float64
		for i, c := range m.classes {
			switch {
			case t < fixed[i]:
				p += c.weight
			case waits[i] > 0:
				p += c.weight * math.Exp(-(t-fixed[i])/waits[i])
			}
		}
		return p
	}
	hi := 0.0
	for i := range fixed {
		hi = math.Max(hi, fixed[i]+60*waits[i])
	}
	lo := 0.0
	for range 100 {
		mid := (lo + hi) / 2
		if tail(mid) > 1-q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}
