package proxy

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"io"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/storage"
)

// replicatedFirst is a node to which replication brings each object PUT before the PUT itself
// commits there (a slow replica, and a peer's replicator pushing the version it already holds):
// the PUT then finds its own version in place.
type replicatedFirst struct{ *storage.Node }

func (n replicatedFirst) PutObject(ctx context.Context, dev string, part uint32, name meta.ObjectName, obj meta.Object, body io.Reader, opts nodeclient.PutOptions) (nodeclient.PutResult, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		return nodeclient.PutResult{}, err
	}
	if _, err := n.Node.PutObject(ctx, dev, part, name, obj, bytes.NewReader(data), nodeclient.PutOptions{}); err != nil {
		return nodeclient.PutResult{}, err
	}
	return n.Node.PutObject(ctx, dev, part, name, obj, bytes.NewReader(data), opts)
}

type replicatedFirstDialer struct{ c *cluster }

func (d replicatedFirstDialer) Dial(node string) (nodeclient.Client, error) {
	return replicatedFirst{d.c.nodes[node]}, nil
}

// A plain PUT whose version replication brought to its replicas before the PUT committed there
// has landed: every replica holds it, so the client is told it is stored (as it is), not 409.
func TestPutFindingItsOwnVersionLanded(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 2)
	p, err := New(Config{Ring: c.proxy.containerRing(), Dialer: replicatedFirstDialer{c}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CreateContainer(ctx, "acct", "bkt", nil); err != nil {
		t.Fatal(err)
	}
	name := meta.ObjectName{Account: "acct", Container: "bkt", Object: "o"}
	data := randomBytes(100 << 10)
	o, err := p.PutObject(ctx, name, meta.Object{Size: int64(len(data))}, bytes.NewReader(data), PutOptions{})
	if err != nil {
		t.Fatalf("PUT: %v", err)
	}
	sum := md5.Sum(data)
	if o.ETag != hex.EncodeToString(sum[:]) || o.Size != int64(len(data)) || o.Timestamp == 0 {
		t.Errorf("PUT answered %+v", o)
	}
	if got := readAll(t, p, name, nil); !bytes.Equal(got, data) {
		t.Error("read back other bytes")
	}
}
