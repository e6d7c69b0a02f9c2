package auth

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cairn-store/cairn/internal/sse"
)

// The SSE-KMS keys live in the tenant state beside the accounts, so that they are kept the way
// tenants are: a file in the embedded default, the cluster's sealed tenants object (changed by
// compare-and-swap, polled by every proxy) in a cluster. Their material is sealed by the
// master key before it reaches the store (package sse): the store keeps opaque bytes. The
// Store implements sse.KMSStore.

// KMSKeys lists the SSE-KMS keys, oldest first.
func (s *Store) KMSKeys(ctx context.Context) ([]sse.KMSKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st := s.current().state
	out := make([]sse.KMSKey, 0, len(st.KMSKeys))
	for _, k := range st.KMSKeys {
		out = append(out, *k)
	}
	slices.SortFunc(out, func(a, b sse.KMSKey) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// PutKMSKey stores a new key (create; sse.ErrKMSKeyExists when its ID or alias is taken) or
// replaces the key of its ID (sse.ErrKMSKeyNotFound when there is none).
func (s *Store) PutKMSKey(ctx context.Context, key sse.KMSKey, create bool) error {
	return s.update(ctx, func(st *state) error {
		_, exists := st.KMSKeys[key.ID]
		if create {
			if exists {
				return fmt.Errorf("KMS key %s: %w", key.ID, sse.ErrKMSKeyExists)
			}
			for _, k := range st.KMSKeys {
				if key.Alias != "" && k.Alias == key.Alias {
					return fmt.Errorf("KMS alias %q: %w", key.Alias, sse.ErrKMSKeyExists)
				}
			}
		} else if !exists {
			return fmt.Errorf("KMS key %s: %w", key.ID, sse.ErrKMSKeyNotFound)
		}
		if st.KMSKeys == nil {
			st.KMSKeys = map[string]*sse.KMSKey{}
		}
		k := key
		st.KMSKeys[key.ID] = &k
		return nil
	})
}
