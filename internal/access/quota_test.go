package access

import (
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
