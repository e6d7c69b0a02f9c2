package workload

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestParseMix(t *testing.T) {
	for in, want := range map[string]Mix{
		"get=90,put=5,delete=5": {OpGet: 90, OpPut: 5, OpDelete: 5},
		" GET = 1 , head=0.5 ":  {OpGet: 1, OpHead: 0.5},
		"list=1,":               {OpList: 1},
		"put=1,get=0":           {OpPut: 1, OpGet: 0},
	} {
		got, err := ParseMix(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseMix(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, wantErr := range map[string]string{
		"":              "at least one weight",
		"get=0":         "at least one weight",
		"get":           "op=weight",
		"copy=1":        `unknown operation "copy"`,
		"get=1,get=2":   "get given twice",
		"get=x":         `weight for "get" is not a number`,
		"get=-1,put=2":  `weight for "get" must be ≥ 0`,
		"get=+Inf":      `weight for "get" must be ≥ 0 and finite`,
		"get=NaN,put=1": `weight for "get"`,
	} {
		if m, err := ParseMix(in); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ParseMix(%q) = %v, %v; want an error containing %q", in, m, err, wantErr)
		}
	}
}

func TestMixString(t *testing.T) {
	m := Mix{OpDelete: 5, OpPut: 5, OpGet: 90, OpList: 0}
	if got, want := m.String(), "get 90 / put 5 / delete 5"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestMixPick(t *testing.T) {
	m := Mix{OpGet: 60, OpPut: 25, OpDelete: 10, OpHead: 5, OpList: 0}
	p := m.Picker()
	const n = 200_000
	r1, r2 := rand.New(rand.NewPCG(5, 6)), rand.New(rand.NewPCG(5, 6))
	counts := map[Op]int{}
	for range n {
		a, b := m.Pick(r1), p.Pick(r2)
		if a != b {
			t.Fatalf("Mix.Pick = %s but MixPicker.Pick = %s with the same random numbers", a, b)
		}
		counts[a]++
	}
	if counts[OpList] != 0 {
		t.Errorf("list (weight 0) picked %d times", counts[OpList])
	}
	for op, w := range m {
		if got, want := float64(counts[op])/n, w/100; math.Abs(got-want) > 0.01 {
			t.Errorf("%s: share %.3f, want %.2f", op, got, want)
		}
	}
	if got := (Mix{}).Picker().Pick(r1); got != OpGet {
		t.Errorf("empty picker picked %s", got)
	}
}
