package advisor

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func loadExample(t *testing.T) *Catalog {
	t.Helper()
	c, err := ParseCatalog("example", ExampleCatalog())
	if err != nil {
		t.Fatalf("the example catalog: %v", err)
	}
	return c
}

func smallCatalog(t *testing.T) *Catalog {
	t.Helper()
	c, err := LoadCatalog("testdata/small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestExampleCatalog(t *testing.T) {
	c := loadExample(t)
	if len(c.NodeTypes) == 0 || len(c.DiskTypes) == 0 || len(c.LoadBalancers) == 0 || c.Years != 3 {
		t.Fatalf("example catalog: %+v", c)
	}
	// docs/advisor.md documents every field of the example: each key must appear there.
	doc, err := os.ReadFile("../../docs/advisor.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"schema", "currency", "years", "node_types", "cores", "cpu_speed", "memory_gib", "nics",
		"gbps", "count", "disk_slots", "controller_mbps", "price", "yearly_cost", "roles", "disk_types", "capacity_tb",
		"iops", "mbps", "load_balancers", "requests_per_second", "limits", "max_proxies", "max_storage_nodes", "max_load_balancers"} {
		if !strings.Contains(string(doc), "`"+key+"`") {
			t.Errorf("docs/advisor.md does not document catalog field %q", key)
		}
	}
}

// Every problem is one line naming the field, and every line wraps ErrInvalidCatalog.
func TestCatalogValidation(t *testing.T) {
	for _, tc := range []struct {
		name, edit, want string
	}{
		{"schema", "schema: 1\n", "schema: 2\n"},
		{"cores", "cores: 16\n", "cores: 0\n"},
		{"cpu speed", "cpu_speed: 1.0        #", "cpu_speed: -1        #"},
		{"nic", "{name: 2x10G, gbps: 10, count: 2, price: 0}\n      - {name: 2x25G, gbps: 25, count: 2, price: 450}\n    disk_slots: 2",
			"{name: 2x10G, gbps: 0, count: 2, price: 0}\n      - {name: 2x25G, gbps: 25, count: 2, price: 450}\n    disk_slots: 2"},
		{"disk iops", "iops: 180", "iops: 0"},
		{"duplicate name", "name: hdd-20t", "name: hdd-8t"},
		{"lb gbps", "gbps: 10, requests_per_second: 100000", "gbps: 0, requests_per_second: 100000"},
		{"role", "roles: [storage]", "roles: [storage, archive]"},
		{"negative years", "years: 3", "years: -1"},
		{"unknown field", "memory_gib: 32", "memory_gb: 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := string(ExampleCatalog())
			if !strings.Contains(y, tc.edit) {
				t.Fatalf("the example catalog has no %q", tc.edit)
			}
			y = strings.Replace(y, tc.edit, tc.want, 1)
			_, err := ParseCatalog("cat.yaml", []byte(y))
			if !errors.Is(err, ErrInvalidCatalog) {
				t.Fatalf("err = %v, want ErrInvalidCatalog", err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "cat.yaml: invalid catalog: ") {
				t.Fatalf("err = %q, want one line starting with the file name", err)
			}
			t.Log(err)
		})
	}
}

func TestCatalogValidationManyProblems(t *testing.T) {
	c := &Catalog{Schema: 1, NodeTypes: []NodeType{{Name: "x", Cores: 0, CPUSpeed: 1, Price: 0, Roles: []Role{RoleProxy}}}}
	c.setDefaults()
	err := c.Validate()
	want := []string{
		"disk_types: none listed",
		"node_types[0] (x): cores must be > 0",
		"node_types[0] (x): nics: none listed",
		"node_types[0] (x): price must be > 0",
		"node_types: no type may store objects (roles storage or sumo)",
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), "invalid catalog: "+w) {
			t.Errorf("missing %q in:\n%v", w, err)
		}
	}
	if n := len(strings.Split(err.Error(), "\n")); n != len(want) {
		t.Errorf("%d lines, want %d:\n%v", n, len(want), err)
	}
}
