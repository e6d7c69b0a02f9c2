package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/auth"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
)

// aclMigration walks every account's buckets and migrates the bucket ACLs stored with their
// old meaning (access.MigrateLegacyACL decides what to write; this only reads and writes
// container metadata through the proxy). Each bucket is one metadata update, so a bucket is
// migrated whole or not at all; running it again finds only what is left.
func aclMigration(px *proxy.Proxy, keys *auth.Store) admin.ACLMigrationFunc {
	return func(ctx context.Context, dryRun bool) (admin.ACLMigrationReport, error) {
		rep := admin.ACLMigrationReport{DryRun: dryRun, Legacy: []admin.ACLMigrationBucket{}}
		accounts, err := keys.Accounts(ctx)
		if err != nil {
			return rep, fmt.Errorf("acl migration: accounts: %w", err)
		}
		for _, a := range accounts {
			var opts meta.ListOptions
			for {
				l, err := px.ListContainers(ctx, a.Name, opts)
				if errors.Is(err, meta.ErrNotFound) {
					break
				}
				if err != nil {
					return rep, fmt.Errorf("acl migration: containers of %q: %w", a.Name, err)
				}
				for _, c := range l.Containers {
					rep.Buckets++
					if err := migrateBucketACL(ctx, px, a.Name, c.Name, dryRun, &rep); err != nil {
						return rep, err
					}
				}
				if !l.Truncated || l.NextMarker == "" {
					break
				}
				opts.Marker = l.NextMarker
			}
		}
		return rep, nil
	}
}

func migrateBucketACL(ctx context.Context, px *proxy.Proxy, account, bucket string, dryRun bool, rep *admin.ACLMigrationReport) error {
	c, err := px.HeadContainer(ctx, account, bucket)
	if errors.Is(err, meta.ErrNotFound) {
		return nil // deleted since it was listed
	}
	if err != nil {
		return fmt.Errorf("acl migration: bucket %s/%s: %w", account, bucket, err)
	}
	if c.Meta[access.MetaLegacyACL] == "" {
		return nil
	}
	mig := access.MigrateLegacyACL(bucket, c.Meta)
	entry := admin.ACLMigrationBucket{Account: account, Bucket: bucket, Readers: mig.Readers, Refused: mig.Refused}
	rep.Legacy = append(rep.Legacy, entry)
	if mig.Refused != "" {
		rep.Refused++
		return nil
	}
	if !dryRun {
		if _, err := px.PostContainer(ctx, account, bucket, mig.Changes); err != nil {
			return fmt.Errorf("acl migration: bucket %s/%s: %w", account, bucket, err)
		}
	}
	rep.Migrated++
	return nil
}
