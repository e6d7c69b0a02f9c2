// Package robustness is Cairn's robustness tier, in the spirit of Jepsen and of etcd's
// tests/robustness: clients on several proxies of a cluster of real processes run random
// operations on a small key space while a nemesis kills, pauses and restarts storage nodes and
// proxies; every request and answer is recorded as a history, and each key's history is
// checked against the model of docs/consistency.md with porcupine, the Go linearizability
// checker. Runs only when CAIRN_ROBUSTNESS is set (short: about 3 minutes; long: 15).
package robustness

import (
	"fmt"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
)

// The operations of a key's history.
type opKind uint8

const (
	opPut    opKind = iota // PUT v
	opCreate               // PUT v with If-None-Match: *
	opGet                  // GET
	opDelete               // DELETE
)

func (k opKind) String() string { return [...]string{"put", "create", "get", "delete"}[k] }

type input struct {
	key   string
	kind  opKind
	value string // put, create
	// multipart: the put or create is a multipart upload, whose Complete writes the key (its
	// one part is the value; the history records it from the Complete's call on).
	multipart bool
}

// The outcomes. A write whose outcome the client could not know (an error other than the
// answers below, a timeout, its proxy killed) is unknown: it may or may not take effect, and
// the checker tries both.
type outcome uint8

const (
	ok       outcome = iota // 200/204; a GET with a body
	notFound                // GET 404
	exists                  // create 412
	conflict                // create 409: it wrote nothing, and says nothing of the state
	unknown
)

type output struct {
	outcome outcome
	value   string // a GET's body
	version string // an acknowledged PUT's version ID, in a versioned bucket
}

// model is one key as docs/consistency.md promises it: a register holding the last value
// written ("" for none), read-after-write, exactly one of racing creates wins.
var model = porcupine.NondeterministicModel{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range h {
			k := op.Input.(input).key
			if _, seen := byKey[k]; !seen {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() []any { return []any{""} },
	Step: func(st, in, out any) []any {
		state, i, o := st.(string), in.(input), out.(output)
		switch i.kind {
		case opPut:
			if o.outcome == unknown {
				return []any{state, i.value}
			}
			return []any{i.value}
		case opCreate:
			switch o.outcome {
			case ok:
				if state == "" {
					return []any{i.value}
				}
			case exists:
				if state != "" {
					return []any{state}
				}
			case conflict:
				return []any{state}
			case unknown:
				if state == "" {
					return []any{state, i.value}
				}
				return []any{state}
			}
			return nil
		case opGet:
			if (o.outcome == notFound && state == "") || (o.outcome == ok && o.value == state) {
				return []any{state}
			}
			return nil
		case opDelete:
			if o.outcome == unknown {
				return []any{state, ""}
			}
			return []any{""}
		}
		return nil
	},
	Equal: func(a, b any) bool { return a.(string) == b.(string) },
	DescribeOperation: func(in, out any) string {
		i, o := in.(input), out.(output)
		s := fmt.Sprintf("%s %s", i.kind, i.key)
		if i.multipart {
			s = fmt.Sprintf("%s (multipart) %s", i.kind, i.key)
		}
		if i.value != "" {
			s += " " + i.value
		}
		return s + " → " + [...]string{"ok", "404", "412", "409", "?"}[o.outcome] + strings.TrimSpace(" "+o.value)
	},
	DescribeState: func(st any) string { return fmt.Sprintf("%q", st) },
}

// The checker accepts what the promise allows and refuses what it does not: a test that
// cannot fail is a defect.
func TestModel(t *testing.T) {
	m := model.ToModel()
	op := func(client int, call, ret int64, kind opKind, value string, out outcome, got string) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Call: call, Return: ret, Input: input{key: "k", kind: kind, value: value}, Output: output{outcome: out, value: got}}
	}
	cases := []struct {
		name string
		ok   bool
		h    []porcupine.Operation
	}{
		{"read after write", true, []porcupine.Operation{op(0, 0, 1, opPut, "a", ok, ""), op(1, 2, 3, opGet, "", ok, "a")}},
		{"stale read", false, []porcupine.Operation{op(0, 0, 1, opPut, "a", ok, ""), op(0, 2, 3, opPut, "b", ok, ""), op(1, 4, 5, opGet, "", ok, "a")}},
		{"false 404", false, []porcupine.Operation{op(0, 0, 1, opPut, "a", ok, ""), op(1, 2, 3, opGet, "", notFound, "")}},
		{"two creates win", false, []porcupine.Operation{op(0, 0, 5, opCreate, "a", ok, ""), op(1, 0, 5, opCreate, "b", ok, "")}},
		{"one create wins, one 412", true, []porcupine.Operation{op(0, 0, 5, opCreate, "a", ok, ""), op(1, 0, 5, opCreate, "b", exists, ""), op(2, 6, 7, opGet, "", ok, "a")}},
		{"a loser's bytes visible", false, []porcupine.Operation{op(0, 0, 5, opCreate, "a", ok, ""), op(1, 0, 5, opCreate, "b", exists, ""), op(2, 6, 7, opGet, "", ok, "b")}},
		{"unknown write may land", true, []porcupine.Operation{op(0, 0, 1<<62, opPut, "a", unknown, ""), op(1, 2, 3, opGet, "", ok, "a")}},
		{"unknown write may not", true, []porcupine.Operation{op(0, 0, 1<<62, opPut, "a", unknown, ""), op(1, 2, 3, opGet, "", notFound, "")}},
		{"409 says nothing", true, []porcupine.Operation{op(0, 0, 1, opCreate, "a", conflict, ""), op(1, 2, 3, opGet, "", notFound, "")}},
		{"412 on nothing", false, []porcupine.Operation{op(0, 0, 1, opCreate, "a", exists, "")}},
	}
	for _, c := range cases {
		if got := porcupine.CheckOperations(m, c.h); got != c.ok {
			t.Errorf("%s: linearizable %v, want %v", c.name, got, c.ok)
		}
	}
}
