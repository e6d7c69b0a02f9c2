package proxy

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cairn-store/cairn/internal/casreg"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/storage"
)

// lossyNodes reaches real storage nodes through a network that loses register messages, or
// their answers after the node acted on them, at random.
type lossyNodes struct {
	nodes map[string]*storage.Node
	mu    sync.Mutex
	rng   *rand.Rand
	loss  int // per cent of messages lost each way
	down  map[string]bool
}

type lossyNode struct {
	*storage.Node
	net *lossyNodes
}

func (l *lossyNodes) Dial(node string) (nodeclient.Client, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down[node] {
		return nil, fmt.Errorf("node %s is down", node)
	}
	return lossyNode{l.nodes[node], l}, nil
}

func (l *lossyNodes) lose() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rng.IntN(100) < l.loss
}

func (n lossyNode) Register(ctx context.Context, device string, part uint32, key string, m casreg.Message) (casreg.Reply, error) {
	if n.net.lose() {
		return casreg.Reply{}, fmt.Errorf("message lost: %w", meta.ErrUnavailable)
	}
	r, err := n.Node.Register(ctx, device, part, key, m)
	if err == nil && n.net.lose() {
		return casreg.Reply{}, fmt.Errorf("answer lost: %w", meta.ErrUnavailable)
	}
	return r, err
}

var errTaken = errors.New("the register holds a value already")

// Proxies racing to create the same register's value, through a network that loses messages
// and with one acceptor down: in every round at most one is told it won, every other is told it
// lost or that its outcome is unknown, and afterwards every proxy reads the winner's value (or,
// in a round nobody was told they won, one value of a proxy whose outcome was unknown).
func TestRacingProxiesDecideOneWinner(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 3)
	seed := uint64(rand.Int64())
	net := &lossyNodes{nodes: c.nodes, rng: rand.New(rand.NewPCG(seed, 1)), loss: 10, down: map[string]bool{}}
	const proxies, rounds = 5, 30
	ps := make([]*Proxy, proxies)
	for i := range ps {
		p, err := New(Config{Ring: c.proxy.objectRings[0](), Dialer: net, ErrorLimit: -1})
		if err != nil {
			t.Fatal(err)
		}
		ps[i] = p
	}
	name := meta.ObjectName{Account: "acct", Container: "box", Object: "race"}
	r := ps[0].objectRings[0]()
	pl := func(p *Proxy) *placement { return p.place(r, partition(r, name.Account, name.Container, name.Object)) }
	won, unknown, lost := 0, 0, 0
	for round := range rounds {
		net.mu.Lock()
		clear(net.down)
		if round%3 == 1 {
			net.down[fmt.Sprintf("node%d", round%3)] = true
		}
		net.mu.Unlock()
		key := fmt.Sprintf("round-%d", round)
		outcomes := make([]casreg.Outcome, proxies)
		var wg sync.WaitGroup
		for i, p := range ps {
			wg.Go(func() {
				mine := []byte(fmt.Sprintf("proxy %d", i))
				o, err := p.decide(ctx, pl(p), key, func(cur []byte) ([]byte, error) {
					if cur != nil {
						return nil, errTaken
					}
					return mine, nil
				}, nil)
				if err != nil {
					t.Errorf("seed %d round %d proxy %d: %v", seed, round, i, err)
				}
				outcomes[i] = o
			})
		}
		wg.Wait()
		var winners []int
		possible := map[string]bool{}
		for i, o := range outcomes {
			switch {
			case o.Err == nil:
				winners = append(winners, i)
				won++
			case errors.Is(o.Err, errTaken):
				lost++
			case errors.Is(o.Err, casreg.ErrUnknown), errors.Is(o.Err, casreg.ErrUnavailable):
				unknown++
				possible[fmt.Sprintf("proxy %d", i)] = true
			default:
				t.Errorf("seed %d round %d proxy %d: outcome %v", seed, round, i, o.Err)
			}
		}
		if len(winners) > 1 {
			t.Fatalf("seed %d round %d: %d proxies were told they won: %v", seed, round, len(winners), winners)
		}
		// Every proxy reads the same value, and it is the winner's.
		net.mu.Lock()
		clear(net.down)
		loss := net.loss
		net.loss = 0
		net.mu.Unlock()
		for i, p := range ps {
			o, err := p.decide(ctx, pl(p), key, nil, nil)
			if err != nil || o.Err != nil {
				t.Fatalf("seed %d round %d: read by proxy %d: %v %v", seed, round, i, err, o.Err)
			}
			got := string(o.Value.Data)
			switch {
			case len(winners) == 1 && got != fmt.Sprintf("proxy %d", winners[0]):
				t.Fatalf("seed %d round %d: proxy %d reads %q, but proxy %d won", seed, round, i, got, winners[0])
			case len(winners) == 0 && got != "" && !possible[got]:
				t.Fatalf("seed %d round %d: proxy %d reads %q, which no proxy with an unknown outcome proposed", seed, round, i, got)
			}
		}
		net.mu.Lock()
		net.loss = loss
		net.mu.Unlock()
	}
	t.Logf("seed %d: %d won, %d lost, %d unknown over %d rounds", seed, won, lost, unknown, rounds)
	if won == 0 || lost == 0 {
		t.Fatalf("seed %d: the test decided nothing: %d won, %d lost", seed, won, lost)
	}
}

// When no quorum of acceptors can be reached, a decision ends at once as unavailable (nothing
// changed), not at the deadline; and over nodes that keep no registers it says so.
func TestDecisionWithoutAQuorum(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 3)
	c.down["node0"], c.down["node1"] = true, true
	name := meta.ObjectName{Account: "acct", Container: "box", Object: "o"}
	r := c.proxy.objectRings[0]()
	pl := c.proxy.place(r, partition(r, name.Account, name.Container, name.Object))
	o, err := c.proxy.decide(ctx, pl, "k", func([]byte) ([]byte, error) { return []byte("v"), nil }, nil)
	if err != nil || !errors.Is(o.Err, casreg.ErrUnavailable) {
		t.Fatalf("outcome %v, err %v; want ErrUnavailable", o.Err, err)
	}
	c.down["node0"], c.down["node1"] = false, false
	pl = c.proxy.place(r, pl.part)
	o, err = c.proxy.decide(ctx, pl, "k", nil, nil)
	if err != nil || o.Err != nil || o.Value.Data != nil {
		t.Fatalf("after the failed decision the register holds %+v (%v, %v)", o.Value, o.Err, err)
	}

	noRegs := &cluster{nodes: c.nodes, down: map[string]bool{}}
	p, err := New(Config{Ring: r, Dialer: withoutRegisters{noRegs}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.decide(ctx, p.place(r, pl.part), "k", nil, nil); !errors.Is(err, ErrNoRegisters) {
		t.Fatalf("over nodes without registers: %v", err)
	}
}

// withoutRegisters dials nodes that keep no registers, as OpenStack Swift's servers.
type withoutRegisters struct{ c *cluster }

func (w withoutRegisters) Dial(node string) (nodeclient.Client, error) {
	n, err := w.c.Dial(node)
	if err != nil {
		return nil, err
	}
	return struct{ nodeclient.Client }{n}, nil
}
