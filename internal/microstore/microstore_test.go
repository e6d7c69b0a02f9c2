package microstore

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/workload"
)

var t0 = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func apply(t *testing.T, d *Description, changes ...Change) *Description {
	t.Helper()
	for _, c := range changes {
		next, err := d.Apply(c, t0)
		if err != nil {
			t.Fatal(err)
		}
		d = next
	}
	return d
}

// two is a description of two microstores as the seed's configuration 2 has them: small
// objects on one, large on the other.
func two(t *testing.T) *Description {
	return apply(t, &Description{},
		Create(Microstore{Name: "small", Policy: "gold", Proxies: []string{"10.0.0.1:8080", "10.0.0.2:8080"}, Classes: []workload.Class{workload.SmallReads, workload.SmallWrites}}),
		Create(Microstore{Name: "large", Policy: "silver", Proxies: []string{"10.0.0.3:8080"}, Classes: []workload.Class{workload.LargeReads, workload.LargeWrites}}))
}

func TestChanges(t *testing.T) {
	d := two(t)
	if d.Generation != 2 || len(d.Microstores) != 2 || d.Microstores[0].Name != "large" || !d.Changed.Equal(t0) {
		t.Fatalf("after two creates: %+v", d)
	}
	if m, ok := d.OfPolicy("Policy-1", "SILVER"); !ok || m.Name != "large" {
		t.Errorf("OfPolicy(silver): %+v, %v", m, ok)
	}
	if m, ok := d.ForClass(workload.SmallWrites); !ok || m.Name != "small" {
		t.Errorf("ForClass(B): %+v, %v", m, ok)
	}
	if _, ok := d.ForClass(workload.Unclassified); ok {
		t.Error("an unclassified bucket has a microstore")
	}

	cases := []struct {
		name   string
		change Change
		want   error
		check  func(d *Description) bool
	}{
		{"create a third", Create(Microstore{Name: "archive", Policy: "ec42"}), nil,
			func(d *Description) bool { return len(d.Microstores) == 3 }},
		{"a name taken", Create(Microstore{Name: "small", Policy: "ec42"}), ErrExists, nil},
		{"a policy taken, in another case", Create(Microstore{Name: "x", Policy: "GOLD"}), ErrConflicts, nil},
		{"a proxy taken", Create(Microstore{Name: "x", Policy: "ec42", Proxies: []string{"10.0.0.3:8080"}}), ErrConflicts, nil},
		{"a class taken", Create(Microstore{Name: "x", Policy: "ec42", Classes: []workload.Class{workload.LargeReads}}), ErrConflicts, nil},
		{"no policy", Create(Microstore{Name: "x"}), ErrInvalid, nil},
		{"a bad name", Create(Microstore{Name: "Big Store", Policy: "ec42"}), ErrInvalid, nil},
		{"a name starting with -", Create(Microstore{Name: "-x", Policy: "ec42"}), ErrInvalid, nil},
		{"a proxy not host:port", Create(Microstore{Name: "x", Policy: "ec42", Proxies: []string{"10.0.0.9"}}), ErrInvalid, nil},
		{"a proxy twice", Create(Microstore{Name: "x", Policy: "ec42", Proxies: []string{"h:1", "h:1"}}), ErrInvalid, nil},
		{"unclassified places nothing", Create(Microstore{Name: "x", Policy: "ec42", Classes: []workload.Class{workload.Unclassified}}), ErrInvalid, nil},
		{"resize", Resize("large", []string{"10.0.0.3:8080", "10.0.0.4:8080"}), nil,
			func(d *Description) bool { m, _ := d.Find("large"); return len(m.Proxies) == 2 }},
		{"resize onto another's proxy", Resize("large", []string{"10.0.0.1:8080"}), ErrConflicts, nil},
		{"resize what is not there", Resize("medium", nil), ErrNotFound, nil},
		{"assign moves a class", Assign("large", []workload.Class{workload.LargeReads, workload.LargeWrites, workload.SmallWrites}), nil,
			func(d *Description) bool {
				s, _ := d.Find("small")
				m, _ := d.ForClass(workload.SmallWrites)
				return m.Name == "large" && slices.Equal(s.Classes, []workload.Class{workload.SmallReads})
			}},
		{"assign what is not there", Assign("medium", nil), ErrNotFound, nil},
		{"delete", Delete("small"), nil, func(d *Description) bool { _, ok := d.OfPolicy("gold"); return !ok && len(d.Microstores) == 1 }},
		{"delete what is not there", Delete("medium"), ErrNotFound, nil},
		{"a pool", SetPool([]string{"10.0.0.8:8080", "10.0.0.9:8080"}), nil,
			func(d *Description) bool { return len(d.Pool) == 2 }},
		{"a pool naming a microstore's proxy", SetPool([]string{"10.0.0.1:8080"}), ErrConflicts, nil},
		{"a pool naming a proxy twice", SetPool([]string{"h:1", "h:1"}), ErrInvalid, nil},
		{"a pool of a bad address", SetPool([]string{"h"}), ErrInvalid, nil},
		{"a proxy with a user and a path", SetPool([]string{"u@host/x:80"}), ErrInvalid, nil},
		{"a proxy with a port out of range", SetPool([]string{"host:70000"}), ErrInvalid, nil},
		{"an IPv6 proxy", SetPool([]string{"[::1]:8080"}), nil, func(d *Description) bool { return len(d.Pool) == 1 }},
		{"a microstore's proxy to the pool", Move("10.0.0.2:8080", ""), nil,
			func(d *Description) bool {
				s, _ := d.Find("small")
				return len(s.Proxies) == 1 && slices.Equal(d.Pool, []string{"10.0.0.2:8080"})
			}},
		{"a proxy from one microstore to another", Move("10.0.0.2:8080", "large"), nil,
			func(d *Description) bool {
				s, _ := d.Find("small")
				l, _ := d.Find("large")
				return len(s.Proxies) == 1 && slices.Equal(l.Proxies, []string{"10.0.0.3:8080", "10.0.0.2:8080"}) && len(d.Pool) == 0
			}},
		{"a proxy nowhere", Move("10.0.0.7:8080", "large"), ErrNotFound, nil},
		{"to no such microstore", Move("10.0.0.2:8080", "medium"), ErrNotFound, nil},
	}
	for _, c := range cases {
		next, err := d.Apply(c.change, t0.Add(time.Hour))
		if c.want != nil {
			if !errors.Is(err, c.want) || next != nil {
				t.Errorf("%s: %v, want %v", c.name, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if next.Generation != d.Generation+1 || !next.Changed.Equal(t0.Add(time.Hour)) || !c.check(next) {
			t.Errorf("%s: %+v", c.name, next)
		}
	}
	// No change touched the description it was applied to.
	if again := two(t); len(d.Microstores) != 2 || d.Generation != 2 || !slices.Equal(d.Microstores[1].Proxies, again.Microstores[1].Proxies) ||
		!slices.Equal(d.Microstores[1].Classes, again.Microstores[1].Classes) || len(d.Microstores[0].Proxies) != 1 {
		t.Errorf("the description changed under its changes: %+v", d)
	}
}

func TestEncodeDecode(t *testing.T) {
	d := two(t)
	b, err := d.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(b)
	if err != nil || back.Generation != 2 || len(back.Microstores) != 2 || !slices.Equal(back.Microstores[1].Classes, d.Microstores[1].Classes) {
		t.Fatalf("decoded %+v, %v from\n%s", back, err, b)
	}
	for _, bad := range []string{`{`, `{"microstores": [{"name": "a", "policy": "p"}, {"name": "a", "policy": "q"}]}`,
		`{"microstores": [{"name": "a", "policy": "p", "classes": ["E"]}]}`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("decoded %s", bad)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"generation": 3, "microstores": [{"name": "small", "policy": "gold", "proxies": ["h:1"], "classes": ["A", "B"]}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Decode(b)
		if err != nil {
			return
		}
		// What decodes is valid, and encodes to what decodes the same.
		if err := d.Validate(); err != nil {
			t.Fatalf("decoded an invalid description: %v", err)
		}
		enc, err := d.Encode()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Decode(enc)
		if err != nil || again.Generation != d.Generation || len(again.Microstores) != len(d.Microstores) {
			t.Fatalf("round trip: %+v, %v", again, err)
		}
	})
}
