package access

import (
	"context"
	"errors"
	"testing"
)

func TestCheckQuota(t *testing.T) {
	cases := []struct {
		q         Quota
		used, add Usage
		resource  string // "" when allowed
	}{
		{Quota{}, Usage{1 << 40, 1 << 30}, Usage{1 << 40, 1}, ""},
		{Quota{Bytes: 100}, Usage{50, 0}, Usage{50, 1}, ""},
		{Quota{Bytes: 100}, Usage{50, 0}, Usage{51, 1}, "bytes"},
		{Quota{Bytes: 100}, Usage{100, 0}, Usage{1, 1}, "bytes"},
		{Quota{Bytes: 100}, Usage{200, 0}, Usage{0, 1}, ""}, // an empty object adds no bytes
		{Quota{Objects: 2}, Usage{0, 1}, Usage{10, 1}, ""},
		{Quota{Objects: 2}, Usage{0, 2}, Usage{10, 1}, "objects"},
		{Quota{Objects: 2}, Usage{0, 5}, Usage{10, 0}, ""}, // a part adds no object
		{Quota{Bytes: 10, Objects: 2}, Usage{5, 2}, Usage{10, 1}, "bytes"},
		{Quota{Bytes: 10, Objects: 2}, Usage{5, 2}, Usage{1, 1}, "objects"},
		{Quota{Bytes: -1, Objects: -1}, Usage{5, 2}, Usage{1, 1}, ""},
	}
	for _, c := range cases {
		err := CheckQuota("account", c.q, c.used, c.add)
		if c.resource == "" {
			if err != nil {
				t.Errorf("%+v %+v %+v: %v", c.q, c.used, c.add, err)
			}
			continue
		}
		var qe *QuotaError
		if !errors.Is(err, ErrQuotaExceeded) || !errors.As(err, &qe) || qe.Resource != c.resource || qe.Scope != "account" {
			t.Errorf("%+v %+v %+v: %v, want %s exceeded", c.q, c.used, c.add, err, c.resource)
		}
		if err.Error() == "" {
			t.Error("empty message")
		}
	}
	if !(Quota{}).None() || (Quota{Bytes: 1}).None() || (Quota{Objects: 1}).None() {
		t.Error("None")
	}
}

type fixedQuotas map[string]Quota

func (f fixedQuotas) AccountQuota(_ context.Context, a string) (Quota, error) {
	q, ok := f[a]
	if !ok {
		return Quota{}, ErrNoAccount
	}
	return q, nil
}

func TestCheckAccountQuota(t *testing.T) {
	ctx := context.Background()
	reads := 0
	usage := func(context.Context) (Usage, error) { reads++; return Usage{Bytes: 90, Objects: 9}, nil }
	qs := fixedQuotas{"limited": {Bytes: 100, Objects: 10}, "free": {}}
	if err := CheckAccountQuota(ctx, qs, "limited", usage, Usage{Bytes: 11, Objects: 1}); !errors.Is(err, ErrQuotaExceeded) {
		t.Errorf("over the bytes limit: %v", err)
	}
	if err := CheckAccountQuota(ctx, qs, "limited", usage, Usage{Bytes: 10, Objects: 1}); err != nil {
		t.Errorf("within the limits: %v", err)
	}
	reads = 0
	for _, a := range []string{"free", "unknown"} {
		if err := CheckAccountQuota(ctx, qs, a, usage, Usage{Bytes: 1 << 40, Objects: 1}); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
	if err := CheckAccountQuota(ctx, nil, "limited", usage, Usage{Bytes: 1 << 40}); err != nil || reads != 0 {
		t.Errorf("no quotas: %v; usage read %d times, want 0", err, reads)
	}
}
