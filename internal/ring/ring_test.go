package ring

import (
	"errors"
	"fmt"
	"testing"
)

func TestSingleDeviceLookups(t *testing.T) {
	r := SingleDevice("local", "d0", 8, "salt")
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	seen := map[uint32]bool{}
	for i := 0; i < 2000; i++ {
		p := r.Partition("acct", "bucket", string(rune('a'+i%26))+string(rune(i)))
		if p >= 1<<8 {
			t.Fatalf("partition %d out of range", p)
		}
		seen[p] = true
		if n := r.Nodes(p); len(n) != 1 || n[0].Name != "d0" {
			t.Fatalf("nodes of %d = %+v", p, n)
		}
	}
	if len(seen) < 200 {
		t.Fatalf("names spread over only %d of 256 partitions", len(seen))
	}
}

func TestPartitionDependsOnSaltAndName(t *testing.T) {
	a := SingleDevice("n", "d", 16, "one")
	b := SingleDevice("n", "d", 16, "two")
	if a.Partition("x", "y", "z") == b.Partition("x", "y", "z") && a.Partition("x", "y", "w") == b.Partition("x", "y", "w") {
		t.Fatal("salt does not change partitions")
	}
	// "a/b" + "c" must not collide structurally with "a" + "b/c": the separator keeps levels apart
	// only when names cannot contain '/', which containers cannot.
	if a.Partition("acct", "", "") == a.Partition("acct", "c", "") {
		t.Fatal("account and container hash alike")
	}
}

func TestValidateRejectsBrokenRings(t *testing.T) {
	r := SingleDevice("n", "d", 4, "")
	r.Assignments[0][3] = 7
	if err := r.Validate(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Validate = %v, want ErrInvalid", err)
	}
	r = &Ring{PartPower: 2}
	if err := r.Validate(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Validate of empty ring = %v", err)
	}
}

// Every name's hash lies in its partition's range, at every partition power, and the ranges of
// neighbouring partitions meet without a gap.
func TestPartitionRangeHoldsItsNames(t *testing.T) {
	r := &Ring{HashPrefix: "pre", HashSuffix: "suf"}
	for _, power := range []uint{0, 1, 10, 18, 24} {
		r.PartPower = power
		for i := range 200 {
			obj := fmt.Sprintf("o%d", i)
			h := NameHash(r.HashPrefix, r.HashSuffix, "a", "c", obj)
			part := r.Partition("a", "c", obj)
			lo, hi := PartitionRange(part, power)
			if h < lo || h > hi {
				t.Fatalf("power %d: %s hash %x outside partition %d range [%x, %x]", power, obj, h, part, lo, hi)
			}
			if power > 0 && part > 0 {
				_, prevHi := PartitionRange(part-1, power)
				if prevHi+1 != lo {
					t.Fatalf("power %d: partitions %d and %d do not meet", power, part-1, part)
				}
			}
		}
	}
}
