package policy

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	for _, tc := range []struct {
		name string
		conf string
		want []Policy
		def  int
	}{
		{"no file content: the legacy policy", "", []Policy{{Index: 0, Name: "Policy-0", Default: true, Type: Replication}}, 0},
		{"only the hash section", "[swift-hash]\nswift_hash_path_suffix = x\n",
			[]Policy{{Index: 0, Name: "Policy-0", Default: true, Type: Replication}}, 0},
		{"one policy is the default without saying so", "[storage-policy:0]\nname = gold\n",
			[]Policy{{Index: 0, Name: "gold", Default: true, Type: Replication}}, 0},
		{"Swift's SAIO", `
[swift-hash]
swift_hash_path_prefix = p

[storage-policy:0]
name = gold
aliases = yellow, orange
policy_type = replication
default = yes

[storage-policy:1]
name = silver
policy_type = replication
deprecated = no
diskfile_module = egg:swift#replication.fs

[storage-policy:2]
name = ec42
policy_type = erasure_coding
ec_type = liberasurecode_rs_vand
ec_num_data_fragments = 4
ec_num_parity_fragments = 2
`, []Policy{
			{Index: 0, Name: "gold", Aliases: []string{"yellow", "orange"}, Default: true, Type: Replication},
			{Index: 1, Name: "silver", Type: Replication},
			{Index: 2, Name: "ec42", Type: ErasureCoding, EC: EC{Scheme: "liberasurecode_rs_vand", DataFragments: 4, ParityFragments: 2, SegmentSize: DefaultSegmentSize, DuplicationFactor: 1}},
		}, 0},
		{"sections out of order, default elsewhere, keys with colons and case", `
[storage-policy:3]
Name: cold
DEFAULT: True
[storage-policy:0]
name = hot
aliases = hot, ,Warm
deprecated = 1
`, []Policy{
			{Index: 0, Name: "hot", Aliases: []string{"Warm"}, Deprecated: true, Type: Replication},
			{Index: 3, Name: "cold", Default: true, Type: Replication},
		}, 3},
		{"a repeated section merges, the last value wins", "[storage-policy:0]\nname = a\n[storage-policy:0]\nname = b\n",
			[]Policy{{Index: 0, Name: "b", Default: true, Type: Replication}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.conf)
			if err != nil {
				t.Fatal(err)
			}
			got := s.All()
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if !equal(got[i], tc.want[i]) {
					t.Errorf("policy %d: got %+v, want %+v", i, got[i], tc.want[i])
				}
			}
			if d := s.Default(); d.Index != tc.def {
				t.Errorf("default %d, want %d", d.Index, tc.def)
			}
		})
	}
}

func equal(a, b Policy) bool {
	return a.Index == b.Index && a.Name == b.Name && slices.Equal(a.Aliases, b.Aliases) && a.Default == b.Default &&
		a.Deprecated == b.Deprecated && a.Type == b.Type && a.EC == b.EC
}

func TestParseRefusesWhatSwiftRefuses(t *testing.T) {
	const p0 = "[storage-policy:0]\nname = gold\ndefault = yes\n"
	for _, tc := range []struct {
		name, conf, want string
	}{
		{"no policy 0", "[storage-policy:1]\nname = a\ndefault = yes\n", "no policy 0"},
		{"negative index", "[storage-policy:-1]\nname = a\n", "invalid index"},
		{"index not a number", "[storage-policy:one]\nname = a\n", "invalid index"},
		{"no name", "[storage-policy:0]\naliases = a\n", "invalid name"},
		{"a name with a space", "[storage-policy:0]\nname = my gold\n", "invalid name"},
		{"Policy-0 on another index", p0 + "[storage-policy:1]\nname = policy-0\n", "reserved for policy index 0"},
		{"duplicate names without case", p0 + "[storage-policy:1]\nname = GOLD\n", "taken by policy 0"},
		{"an alias taking another policy's name", p0 + "[storage-policy:1]\nname = silver\naliases = Gold\n", "taken by policy 0"},
		{"an alias repeating its own name in another case", "[storage-policy:0]\nname = gold\naliases = GOLD\n", "already assigned"},
		{"two defaults", p0 + "[storage-policy:1]\nname = silver\ndefault = true\n", "both the default"},
		{"no default among several", "[storage-policy:0]\nname = gold\n[storage-policy:1]\nname = silver\n", "no policy is the default"},
		{"deprecated default", "[storage-policy:0]\nname = gold\ndefault = yes\ndeprecated = yes\n", "cannot be the default"},
		{"all deprecated", "[storage-policy:0]\nname = gold\ndeprecated = yes\n", "every policy is deprecated"},
		{"unknown option", "[storage-policy:0]\nname = gold\ncolour = red\n", `invalid option "colour"`},
		{"unknown type", "[storage-policy:0]\nname = gold\npolicy_type = mirroring\n", "invalid policy_type"},
		{"ec options on replication", "[storage-policy:0]\nname = gold\nec_type = liberasurecode_rs_vand\n", `invalid option "ec_type"`},
		{"ec without ec_type", p0 + "[storage-policy:1]\nname = ec\npolicy_type = erasure_coding\nec_num_data_fragments = 4\nec_num_parity_fragments = 2\n", "missing ec_type"},
		{"ec with an unknown ec_type", p0 + "[storage-policy:1]\nname = ec\npolicy_type = erasure_coding\nec_type = rs\nec_num_data_fragments = 4\nec_num_parity_fragments = 2\n", "wrong ec_type"},
		{"ec without k", p0 + "[storage-policy:1]\nname = ec\npolicy_type = erasure_coding\nec_type = jerasure_rs_vand\nec_num_parity_fragments = 2\n", "missing ec_num_data_fragments"},
		{"ec with m = 0", p0 + "[storage-policy:1]\nname = ec\npolicy_type = erasure_coding\nec_type = jerasure_rs_vand\nec_num_data_fragments = 4\nec_num_parity_fragments = 0\n", "invalid ec_num_parity_fragments"},
		{"ec with k not a number", p0 + "[storage-policy:1]\nname = ec\npolicy_type = erasure_coding\nec_type = jerasure_rs_vand\nec_num_data_fragments = four\nec_num_parity_fragments = 2\n", "invalid ec_num_data_fragments"},
		{"cairn_rs with more than 256 fragments", p0 + "[storage-policy:1]\nname = ec\npolicy_type = erasure_coding\nec_type = cairn_rs\nec_num_data_fragments = 250\nec_num_parity_fragments = 10\n", "at most 256"},
		{"isa_l_rs_vand with 5 parity not deprecated", p0 + "[storage-policy:1]\nname = ec\npolicy_type = erasure_coding\nec_type = isa_l_rs_vand\nec_num_data_fragments = 10\nec_num_parity_fragments = 5\n", "must be deprecated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.conf)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrInvalid saying %q", err, tc.want)
			}
		})
	}
}

func TestLookups(t *testing.T) {
	s, err := Parse(`
[storage-policy:0]
name = gold
aliases = yellow
default = yes
[storage-policy:1]
name = silver
deprecated = yes
[storage-policy:2]
name = ec42
policy_type = erasure_coding
ec_type = liberasurecode_rs_vand
ec_num_data_fragments = 4
ec_num_parity_fragments = 2
[storage-policy:3]
name = cairn-ec
policy_type = erasure_coding
ec_type = cairn_rs
ec_num_data_fragments = 4
ec_num_parity_fragments = 2
[storage-policy:4]
name = cairn-ec-dup
policy_type = erasure_coding
ec_type = cairn_rs
ec_num_data_fragments = 2
ec_num_parity_fragments = 1
ec_duplication_factor = 2
[storage-policy:5]
name = bronze
`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		index   int
		wantErr error
	}{
		{"", 0, nil},
		{"GOLD", 0, nil},
		{"Yellow", 0, nil},
		{"bronze", 5, nil},
		{"silver", 1, ErrDeprecated},
		{"ec42", 2, ErrNotSupported}, // Swift's code: liberasurecode's fragments
		{"cairn-ec", 3, nil},
		{"cairn-ec-dup", 4, ErrNotSupported},
		{"tin", -1, ErrUnknown},
	} {
		p, err := s.ForNewContainer(tc.name)
		if !errors.Is(err, tc.wantErr) || (tc.index >= 0 && p.Index != tc.index) {
			t.Errorf("ForNewContainer(%q) = %d, %v; want %d, %v", tc.name, p.Index, err, tc.index, tc.wantErr)
		}
	}
	if p, ok := s.ByIndex(5); !ok || p.Name != "bronze" || p.RingName() != "object-5" {
		t.Errorf("ByIndex(5) = %+v %v", p, ok)
	}
	if p, _ := s.ByIndex(0); p.RingName() != "object" {
		t.Errorf("policy 0's ring is %s", p.RingName())
	}
	if _, ok := s.ByIndex(6); ok {
		t.Error("ByIndex(6) found a policy")
	}
	if p, _ := s.ByIndex(2); p.Replicas() != 6 {
		t.Errorf("an EC 4+2 policy's ring wants %d replicas, want 6", p.Replicas())
	}
}

func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	s, err := ReadDir(dir)
	if err != nil || s.Len() != 1 || s.Default().Name != LegacyName {
		t.Fatalf("without swift.conf: %v %v", s, err)
	}
	if err := os.WriteFile(filepath.Join(dir, ConfName), []byte("[storage-policy:0]\nname = a\n[storage-policy:1]\nname = b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDir(dir); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), ConfName) {
		t.Fatalf("a bad swift.conf: %v", err)
	}
}
