package proxy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/storage"
)

// swiftAccounts is a storage node with the account semantics of Swift's servers: an account
// exists once it is PUT; until then its HEAD and listing answer not found, and a container
// create makes the container but answers not found (Swift's container server, whose account
// update got a 404).
type swiftAccounts struct {
	*storage.Node
	mu       sync.Mutex
	accounts map[string]bool
	puts     int
	swift    bool
}

func (n *swiftAccounts) has(account string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.accounts[account] || !n.swift
}

func (n *swiftAccounts) PutAccount(ctx context.Context, dev string, part uint32, account string, ts meta.Timestamp) error {
	n.mu.Lock()
	n.accounts[account] = true
	n.puts++
	n.mu.Unlock()
	return n.Node.PutAccount(ctx, dev, part, account, ts)
}

func (n *swiftAccounts) PutContainer(ctx context.Context, dev string, part uint32, account string, c meta.Container, opts nodeclient.ContainerOptions) error {
	if err := n.Node.PutContainer(ctx, dev, part, account, c, opts); err != nil {
		return err
	}
	if !n.has(account) {
		return fmt.Errorf("account update: %w", meta.ErrNotFound)
	}
	return nil
}

func (n *swiftAccounts) HeadAccount(ctx context.Context, dev string, part uint32, account string) (meta.Account, error) {
	if !n.has(account) {
		return meta.Account{}, meta.ErrNotFound
	}
	return n.Node.HeadAccount(ctx, dev, part, account)
}

func (n *swiftAccounts) ListContainers(ctx context.Context, dev string, part uint32, account string, opts meta.ListOptions) (meta.ContainerListing, error) {
	if !n.has(account) {
		return meta.ContainerListing{}, meta.ErrNotFound
	}
	return n.Node.ListContainers(ctx, dev, part, account, opts)
}

type swiftCluster struct{ nodes map[string]*swiftAccounts }

func (c swiftCluster) Dial(node string) (nodeclient.Client, error) { return c.nodes[node], nil }

func newSwiftCluster(t *testing.T, swift bool) (*Proxy, swiftCluster) {
	c := newCluster(t, 3)
	sc := swiftCluster{nodes: map[string]*swiftAccounts{}}
	for name, n := range c.nodes {
		sc.nodes[name] = &swiftAccounts{Node: n, accounts: map[string]bool{}, swift: swift}
	}
	c.proxy.dialer = sc
	return c.proxy, sc
}

func (c swiftCluster) accountPuts() int {
	total := 0
	for _, n := range c.nodes {
		n.mu.Lock()
		total += n.puts
		n.mu.Unlock()
	}
	return total
}

// Over servers that hold no account until it is PUT (Swift's), an account is empty until its
// first container, which makes it on its account replicas first, once.
func TestAccountAutocreate(t *testing.T) {
	ctx := context.Background()
	p, sc := newSwiftCluster(t, true)
	a, err := p.HeadAccount(ctx, "acct")
	if err != nil || a.ContainerCount != 0 {
		t.Fatalf("head of an account no server holds: %+v, %v", a, err)
	}
	if l, err := p.ListContainers(ctx, "acct", meta.ListOptions{}); err != nil || len(l.Containers) != 0 {
		t.Fatalf("listing of an account no server holds: %+v, %v", l, err)
	}
	if err := p.CreateContainer(ctx, "acct", "first", nil); err != nil {
		t.Fatalf("first container: %v", err)
	}
	if got := sc.accountPuts(); got != 3 {
		t.Errorf("account PUTs: %d, want one per replica", got)
	}
	if err := p.CreateContainer(ctx, "acct", "first", nil); !errors.Is(err, meta.ErrExists) {
		t.Errorf("the same container again: %v, want ErrExists", err)
	}
	if err := p.CreateContainer(ctx, "acct", "second", nil); err != nil {
		t.Fatal(err)
	}
	if got := sc.accountPuts(); got != 3 {
		t.Errorf("account PUTs after more containers: %d, want 3", got)
	}
	l, err := p.ListContainers(ctx, "acct", meta.ListOptions{})
	if err != nil || len(l.Containers) != 2 {
		t.Fatalf("listing: %+v, %v", l, err)
	}
}

// Over Cairn's nodes (every account implicit), creating a container costs no account request.
func TestNoAccountRequestsOverCairnNodes(t *testing.T) {
	ctx := context.Background()
	p, sc := newSwiftCluster(t, false)
	for _, name := range []string{"a", "b"} {
		if err := p.CreateContainer(ctx, "acct", name, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := sc.accountPuts(); got != 0 {
		t.Errorf("account PUTs: %d, want none", got)
	}
}
