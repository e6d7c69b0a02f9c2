package storage

import (
	"context"

	"github.com/cairn-store/cairn/internal/meta"
)

// HeadContainer returns a container with its usage.
func (n *Node) HeadContainer(ctx context.Context, devName string, part uint32, account, container string) (meta.Container, error) {
	d, err := n.device(devName)
	if err != nil {
		return meta.Container{}, err
	}
	return d.index.GetContainer(ctx, account, container)
}

// PostContainer merges metadata into a container; an empty value removes a key. Each key
// changed keeps the time of the change (this node's clock: the node protocol's POST carries
// none), by which replication tells the newer value of a key on two replicas.
func (n *Node) PostContainer(ctx context.Context, devName string, part uint32, account, container string, m map[string]string) (meta.Container, error) {
	d, err := n.device(devName)
	if err != nil {
		return meta.Container{}, err
	}
	if err := d.engine.CheckWriteSpace(); err != nil {
		return meta.Container{}, err
	}
	return d.index.UpdateContainerMetaAt(ctx, account, container, meta.Now(), m)
}

// ListObjects returns a page of a container's listing.
func (n *Node) ListObjects(ctx context.Context, devName string, part uint32, account, container string, opts meta.ListOptions) (meta.ObjectListing, error) {
	d, err := n.device(devName)
	if err != nil {
		return meta.ObjectListing{}, err
	}
	if _, err := d.index.GetContainer(ctx, account, container); err != nil {
		return meta.ObjectListing{}, err
	}
	return d.index.ListObjects(ctx, account, container, opts)
}

// ListContainers returns a page of an account's containers.
func (n *Node) ListContainers(ctx context.Context, devName string, part uint32, account string, opts meta.ListOptions) (meta.ContainerListing, error) {
	d, err := n.device(devName)
	if err != nil {
		return meta.ContainerListing{}, err
	}
	return d.index.ListContainers(ctx, account, opts)
}

// PutAccount changes nothing: a device holds every account implicitly (its listing and totals
// exist once a container row does). An unknown device is still an error, as for every request.
func (n *Node) PutAccount(ctx context.Context, devName string, part uint32, account string, ts meta.Timestamp) error {
	_, err := n.device(devName)
	return err
}

// HeadAccount returns an account's usage totals.
func (n *Node) HeadAccount(ctx context.Context, devName string, part uint32, account string) (meta.Account, error) {
	d, err := n.device(devName)
	if err != nil {
		return meta.Account{}, err
	}
	return d.index.GetAccount(ctx, account)
}
