package proxy

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/ring"
)

// unreadable is a body that must not be read.
type unreadable struct{ t *testing.T }

func (u unreadable) Read([]byte) (int, error) {
	u.t.Error("the body was read")
	return 0, errors.New("unreadable")
}

// plainClient hides that a node commits companions, as an HTTP client of one does.
type plainClient struct{ nodeclient.Client }

type plainDialer struct{ c *cluster }

func (d plainDialer) Dial(node string) (nodeclient.Client, error) {
	n, err := d.c.Dial(node)
	return plainClient{n}, err
}

func companionFor(name meta.ObjectName, ts meta.Timestamp) Companion {
	return Companion{Name: name, Timestamp: ts, Over: "link", Build: func(stored meta.Object) meta.Object {
		return meta.Object{ContentType: "link", SysMeta: map[string]string{"link": "true", "etag": stored.ETag}}
	}}
}

func TestPutTogether(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 1)
	p := c.proxy
	for _, cont := range []string{"c", "v"} {
		if err := p.CreateContainer(ctx, "a", cont, nil); err != nil {
			t.Fatal(err)
		}
	}
	key := meta.ObjectName{Account: "a", Container: "c", Object: "k"}
	vname := meta.ObjectName{Account: "a", Container: "v", Object: "k1"}
	ts := meta.Now()
	data := []byte("version one")
	stored, compErr, err := p.PutTogether(ctx, vname, meta.Object{Size: int64(len(data))}, bytes.NewReader(data), PutOptions{Timestamp: ts}, companionFor(key, ts+1))
	if err != nil || compErr != nil {
		t.Fatalf("put: %v, companion: %v", err, compErr)
	}
	link, err := p.HeadObject(ctx, key)
	if err != nil || link.SysMeta["etag"] != stored.ETag || link.Timestamp != ts+1 {
		t.Fatalf("link: %+v %v", link, err)
	}
	if got := readAll(t, p, vname, nil); !bytes.Equal(got, data) {
		t.Fatalf("version reads %q", got)
	}
	for _, cont := range []string{"c", "v"} {
		l, err := p.ListObjects(ctx, "a", cont, meta.ListOptions{})
		if err != nil || len(l.Objects) != 1 {
			t.Fatalf("%s lists %+v, %v", cont, l.Objects, err)
		}
	}

	// A failed condition of the companion stores neither.
	comp := companionFor(key, meta.Now()+1)
	comp.If = meta.Precondition{IfNoneMatch: true}
	v2 := meta.ObjectName{Account: "a", Container: "v", Object: "k2"}
	if _, _, err := p.PutTogether(ctx, v2, meta.Object{Size: 1}, bytes.NewReader([]byte("x")), PutOptions{}, comp); !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("put: %v, want precondition failed", err)
	}
	if _, err := p.HeadObject(ctx, v2); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("v2: %v", err)
	}

	// A plain object in place is left to the caller (Over): the object commits alone.
	if _, err := p.PutObject(ctx, key, meta.Object{Size: 1}, bytes.NewReader([]byte("n")), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	ts = meta.Now()
	_, compErr, err = p.PutTogether(ctx, v2, meta.Object{Size: 1}, bytes.NewReader([]byte("y")), PutOptions{Timestamp: ts}, companionFor(key, ts+1))
	if err != nil || !errors.Is(compErr, nodeclient.ErrCompanionRefused) {
		t.Fatalf("put: %v, companion: %v", err, compErr)
	}
	if got := readAll(t, p, key, nil); string(got) != "n" {
		t.Fatalf("key reads %q", got)
	}
}

// Where the two names do not share one device of a node that commits companions, nothing is
// written and the body is not read.
func TestPutTogetherApart(t *testing.T) {
	ctx := context.Background()
	three := newCluster(t, 3)
	one := newCluster(t, 1)
	r := &ring.Ring{PartPower: 4, Devices: []ring.Device{{ID: 0, Node: "node0", Name: "d0", Weight: 1}}, Assignments: [][]int{make([]int, 1<<4)}}
	hidden, err := New(Config{Ring: r, Dialer: plainDialer{one}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Proxy{three.proxy, hidden} {
		for _, cont := range []string{"c", "v"} {
			if err := p.CreateContainer(ctx, "a", cont, nil); err != nil && !errors.Is(err, meta.ErrExists) {
				t.Fatal(err)
			}
		}
		key := meta.ObjectName{Account: "a", Container: "c", Object: "k"}
		vname := meta.ObjectName{Account: "a", Container: "v", Object: "k1"}
		ts := meta.Now()
		if _, _, err := p.PutTogether(ctx, vname, meta.Object{Size: 3}, unreadable{t}, PutOptions{Timestamp: ts}, companionFor(key, ts+1)); !errors.Is(err, ErrApart) {
			t.Fatalf("put: %v, want ErrApart", err)
		}
		if _, err := p.HeadObject(ctx, vname); !errors.Is(err, meta.ErrNotFound) {
			t.Fatalf("version: %v", err)
		}
	}
}
