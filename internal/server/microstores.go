package server

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cairn-store/cairn/internal/auth"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/microstore"
	"github.com/cairn-store/cairn/internal/policy"
	"github.com/cairn-store/cairn/internal/proxy"
)

// Where the cluster keeps its microstores' description (internal/microstore): one object beside
// the tenants object, in the reserved account.
const (
	MicrostoresContainer = "microstores"
	MicrostoresObject    = "description"
	maxDescription       = 1 << 20
)

// maxDescriptionAttempts bounds how often a change is applied again after another proxy
// changed the description under it.
const maxDescriptionAttempts = 8

// microstores keeps the description through the proxy and checks each change against the
// cluster's storage policies as well as against the description's own rules.
type microstores struct {
	obj      *clusterObject
	policies *policy.Set
	now      func() time.Time
	// changed, when set, is told of every change made through this proxy.
	changed func(*microstore.Description)
}

func newMicrostores(px *proxy.Proxy) *microstores {
	return &microstores{
		obj: &clusterObject{px: px, name: meta.ObjectName{Account: TenantsAccount, Container: MicrostoresContainer, Object: MicrostoresObject},
			what: "microstore description", max: maxDescription},
		policies: px.Policies(),
		now:      time.Now,
	}
}

// Describe returns the cluster's description (an empty one, generation 0, before the first
// microstore is made).
func (m *microstores) Describe(ctx context.Context) (*microstore.Description, error) {
	d, _, err := m.load(ctx)
	return d, err
}

func (m *microstores) load(ctx context.Context) (*microstore.Description, string, error) {
	data, version, err := m.obj.Load(ctx)
	if errors.Is(err, auth.ErrBlobNotFound) {
		return &microstore.Description{Microstores: []microstore.Microstore{}}, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	d, err := microstore.Decode(data)
	if err != nil {
		return nil, "", err
	}
	return d, version, nil
}

// Change applies change to the description as the cluster has it and stores the result, as a
// compare-and-swap: when another proxy changed it meanwhile, the change is applied again to
// what it made. A change whose write's outcome is unknown is reported so (meta.ErrUnavailable).
func (m *microstores) Change(ctx context.Context, change microstore.Change) (*microstore.Description, error) {
	checked := func(d *microstore.Description) error {
		if err := change(d); err != nil {
			return err
		}
		for i, ms := range d.Microstores {
			p, ok := m.policies.ByName(ms.Policy)
			if !ok {
				return fmt.Errorf("microstore %q: no storage policy %q: %w", ms.Name, ms.Policy, microstore.ErrInvalid)
			}
			d.Microstores[i].Policy = p.Name // an alias names the policy too; the description keeps its name
		}
		return nil
	}
	for attempt := 1; ; attempt++ {
		d, version, err := m.load(ctx)
		if err != nil {
			return nil, err
		}
		next, err := d.Apply(checked, m.now())
		if err != nil {
			return nil, err
		}
		data, err := next.Encode()
		if err != nil {
			return nil, err
		}
		_, err = m.obj.Store(ctx, data, version)
		if errors.Is(err, auth.ErrBlobConflict) && attempt < maxDescriptionAttempts {
			pause := time.Duration(rand.Int64N(int64(attempt) * int64(10*time.Millisecond)))
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(pause):
			}
			continue
		}
		if errors.Is(err, auth.ErrBlobUnknown) {
			return nil, fmt.Errorf("%v: %w", err, meta.ErrUnavailable)
		}
		if err != nil {
			return nil, err
		}
		if m.changed != nil {
			m.changed(next)
		}
		return next, nil
	}
}
