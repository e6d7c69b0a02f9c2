package robustness

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// A recorded operation, as a failing run writes its history (JSON) for diagnose to read
// again: CAIRN_ROBUSTNESS_HISTORY=file go test -run TestDiagnoseHistory ./test/robustness/.
type recorded struct {
	Client  int
	Key     string
	Kind    opKind
	Value   string
	Call    int64
	Return  int64
	Outcome outcome
	Got     string
}

func saveHistory(path string, ops []porcupine.Operation) error {
	rs := make([]recorded, len(ops))
	for i, op := range ops {
		in, out := op.Input.(input), op.Output.(output)
		rs[i] = recorded{op.ClientId, in.key, in.kind, in.value, op.Call, op.Return, out.outcome, out.value}
	}
	b, err := json.Marshal(rs)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func loadHistory(path string) ([]porcupine.Operation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rs []recorded
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, err
	}
	ops := make([]porcupine.Operation, len(rs))
	for i, r := range rs {
		ops[i] = porcupine.Operation{ClientId: r.Client, Input: input{key: r.Key, kind: r.Kind, value: r.Value}, Call: r.Call, Return: r.Return,
			Output: output{outcome: r.Outcome, value: r.Got}}
	}
	return ops, nil
}

// diagnose names the keys whose history is not linearizable and, for each, the shortest
// prefix (by call time) that is not, with the operations that came just before its last one.
func diagnose(ops []porcupine.Operation) string {
	m := model.ToModel()
	var out strings.Builder
	for _, part := range m.Partition(ops) {
		if porcupine.CheckOperationsTimeout(m, part, time.Minute) != porcupine.Illegal {
			continue
		}
		slices.SortFunc(part, func(a, b porcupine.Operation) int { return int(a.Call - b.Call) })
		lo, hi := 1, len(part) // the shortest illegal prefix has length in (lo-1, hi]
		for lo < hi {
			mid := (lo + hi) / 2
			if porcupine.CheckOperationsTimeout(m, part[:mid], time.Minute) == porcupine.Illegal {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		last := part[hi-1]
		fmt.Fprintf(&out, "key %s: not linearizable once this operation is in (the %dth of %d):\n", last.Input.(input).key, hi, len(part))
		for _, op := range part[:hi] {
			if op.Call < last.Call-3e9 && (op.Return < last.Call-3e9) {
				continue
			}
			ret := "never"
			if op.Return != 1<<63-1 {
				ret = fmt.Sprintf("%.3fs", float64(op.Return)/1e9)
			}
			fmt.Fprintf(&out, "  client %d [%.3fs, %s] %s\n", op.ClientId, float64(op.Call)/1e9, ret, m.DescribeOperation(op.Input, op.Output))
		}
	}
	return out.String()
}

func TestDiagnoseHistory(t *testing.T) {
	path := os.Getenv("CAIRN_ROBUSTNESS_HISTORY")
	if path == "" {
		t.Skip("set CAIRN_ROBUSTNESS_HISTORY to a history a failing run wrote")
	}
	ops, err := loadHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d operations\n%s", len(ops), diagnose(ops))
}
