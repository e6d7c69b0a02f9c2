package proxy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
)

// The shared bucket-name index. Containers belong to accounts, and S3 names a bucket without
// its account; for a tenant (or an anonymous caller) to address a bucket another account
// shares with it, the name must lead to one account. An account claims a name here when it
// shares a container under it; the S3 front end resolves a name the caller does not have in
// its own account through NameOwner.
//
// The index is a reserved account, NamesAccount, holding one container per name whose metadata
// records the owner (MetaNameOwner) and when it claimed the name. Creating that container is
// the claim, so that of two accounts racing for a name one wins. The account name cannot be
// one of the tenant store's (letters, digits, _ and -) and nothing lists it, so no client sees
// it.
const NamesAccount = "\x00names"

// Metadata keys of a name's container.
const (
	MetaNameOwner   = "sys:owner"   // the owning account
	MetaNameClaimed = "sys:claimed" // when it claimed the name (RFC 3339, UTC)
)

// NameGrace is how old a claim must be before it counts as stale when its owner no longer has
// a container of that name (deleted without ReleaseName, for example through another API):
// it also keeps a fresh claim from being taken over before its container is made.
const NameGrace = time.Minute

// ErrNameTaken: another account holds the name.
var ErrNameTaken = errors.New("the name is held by another account")

// NameOwner returns the account holding a name; meta.ErrNotFound if none does.
func (p *Proxy) NameOwner(ctx context.Context, name string) (string, error) {
	c, err := p.HeadContainer(ctx, NamesAccount, name)
	if err != nil {
		return "", fmt.Errorf("name index %q: %w", name, err)
	}
	owner := c.Meta[MetaNameOwner]
	if owner == "" {
		return "", fmt.Errorf("name index %q: no owner recorded: %w", name, meta.ErrNotFound)
	}
	return owner, nil
}

// ClaimName records account as the holder of name. Claiming a name the account holds succeeds;
// a name another account holds is ErrNameTaken, unless that claim is stale (its owner has no
// container of the name, and the claim is older than NameGrace), which is taken over.
func (p *Proxy) ClaimName(ctx context.Context, name, account string) error {
	now := time.Now().UTC()
	claim := map[string]string{MetaNameOwner: account, MetaNameClaimed: now.Format(time.RFC3339Nano)}
	for attempt := 0; ; attempt++ {
		err := p.CreateContainer(ctx, NamesAccount, name, claim)
		if err == nil {
			return nil
		}
		if !errors.Is(err, meta.ErrExists) {
			return fmt.Errorf("claim name %q: %w", name, err)
		}
		c, err := p.HeadContainer(ctx, NamesAccount, name)
		if errors.Is(err, meta.ErrNotFound) && attempt == 0 {
			continue // released in between: try again, once
		}
		if err != nil {
			return fmt.Errorf("claim name %q: %w", name, err)
		}
		owner := c.Meta[MetaNameOwner]
		if owner == account {
			return nil
		}
		if owner != "" {
			_, err := p.HeadContainer(ctx, owner, name)
			if err == nil {
				return fmt.Errorf("claim name %q: held by %q: %w", name, owner, ErrNameTaken)
			}
			if !errors.Is(err, meta.ErrNotFound) {
				return fmt.Errorf("claim name %q: the holder's container: %w", name, err)
			}
			claimed, perr := time.Parse(time.RFC3339Nano, c.Meta[MetaNameClaimed])
			if perr == nil && now.Sub(claimed) < NameGrace {
				return fmt.Errorf("claim name %q: just claimed by %q: %w", name, owner, ErrNameTaken)
			}
		}
		if _, err := p.PostContainer(ctx, NamesAccount, name, claim); err != nil {
			return fmt.Errorf("take over the stale claim of name %q: %w", name, err)
		}
		p.log.InfoContext(ctx, "stale name claim taken over", "name", name, "from", owner, "to", account)
		return nil
	}
}

// ReleaseName drops account's claim on name (another account's claim is left alone), once
// its container is deleted. A claim left behind by a failure is stale, and taken over by the
// next ClaimName of the name.
func (p *Proxy) ReleaseName(ctx context.Context, name, account string) error {
	c, err := p.HeadContainer(ctx, NamesAccount, name)
	if errors.Is(err, meta.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("release name %q: %w", name, err)
	}
	if c.Meta[MetaNameOwner] != account {
		return nil
	}
	if err := p.DeleteContainer(ctx, NamesAccount, name); err != nil && !errors.Is(err, meta.ErrNotFound) {
		return fmt.Errorf("release name %q: %w", name, err)
	}
	return nil
}
