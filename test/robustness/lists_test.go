package robustness

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
)

// A LIST is a read of every key of a bucket at once, so it has no place in porcupine's
// per-key model. It is checked against each key's history instead, where the history
// determines the key's state for the whole of the LIST: under list-after-write, a key whose
// last write before the LIST began was acknowledged, and that no other write could have
// changed before the LIST ended, must be listed if that write stored it and must not be if it
// deleted it. Keys whose state the history leaves open (writes racing the LIST, writes of
// unknown outcome) are not judged. A LIST that names a key never written always fails.
//
// The first runs found list-after-write broken in a cluster while a container replica that
// missed updates (it was down, cut off or paused when they were sent) answered the LIST. A
// listing is now read from a quorum of replicas and merged, and a write is acknowledged only
// once a quorum of them lists it (docs/consistency.md), so a miss fails the run.
// CAIRN_ROBUSTNESS_STRICT_LISTS=0 only reports misses in a cluster (to look past them at the
// rest of a history); the embedded default is strict always.

// listing is one LIST of a bucket: when it was called and answered, and the keys it named.
type listing struct {
	bucket    string
	call, ret int64
	keys      []string
}

func (h *history) addListing(l listing) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lists = append(h.lists, l)
}

// effective says whether a write may have changed its key: every PUT and DELETE, a create
// unless it was refused (412) or told to try again (409).
func effective(op porcupine.Operation) bool {
	in, out := op.Input.(input), op.Output.(output)
	switch in.kind {
	case opPut, opDelete:
		return true
	case opCreate:
		return out.outcome == ok || out.outcome == unknown
	}
	return false
}

// determined returns whether the history fixes key's state for the whole of [call, ret], and
// if so whether the key exists then. writes are the key's effective writes.
func determined(writes []porcupine.Operation, call, ret int64) (fixed, exists bool) {
	var last *porcupine.Operation
	for i := range writes {
		w := &writes[i]
		if w.Call >= ret {
			continue // called after the LIST ended: cannot have taken effect in it
		}
		if w.Return >= call {
			return false, false // may take effect during the LIST (unknown ones never return)
		}
		if last == nil || w.Return > last.Return {
			last = w
		}
	}
	if last == nil {
		return true, false // never written before the LIST ended
	}
	// Every other write that ended before the LIST must be orderable before last: one that
	// began after last ended is, one that overlaps it might take effect after it.
	for i := range writes {
		w := &writes[i]
		if w == last || w.Call >= ret {
			continue
		}
		if w.Return > last.Call {
			return false, false
		}
	}
	return true, last.Input.(input).kind != opDelete
}

// checkLists judges every LIST of the history and reports how many key states it could judge.
// Unless strict, a LIST that misses a write (see above) is reported, not failed.
func checkLists(t *testing.T, h *history, strict bool) {
	t.Helper()
	h.mu.Lock()
	ops, lists := h.ops, h.lists
	h.mu.Unlock()
	writes := map[string][]porcupine.Operation{}
	keysOf := map[string][]string{} // bucket → keys written
	for _, op := range ops {
		if !effective(op) {
			continue
		}
		k := op.Input.(input).key
		if _, seen := writes[k]; !seen {
			b := bucketFor(k, "robust")
			keysOf[b] = append(keysOf[b], k)
		}
		writes[k] = append(writes[k], op)
	}
	judged, listedJudged, open, missed := 0, 0, 0, 0
	for _, l := range lists {
		for _, k := range l.keys {
			if _, known := writes[k]; !known {
				t.Errorf("LIST of %s at [%d, %d] named %q, never written", l.bucket, l.call, l.ret, k)
			}
		}
		for _, k := range keysOf[l.bucket] {
			fixed, exists := determined(writes[k], l.call, l.ret)
			if !fixed {
				open++
				continue
			}
			judged++
			listed := slices.Contains(l.keys, k)
			if listed {
				listedJudged++
			}
			if listed != exists {
				missed++
				report := t.Logf
				if strict {
					report = t.Errorf
				}
				if strict || missed <= 3 {
					report("LIST of %s at [%d, %d] %s %q, whose writes before it say it %s; its last writes:\n%s", l.bucket, l.call, l.ret,
						map[bool]string{true: "named", false: "left out"}[listed], k, map[bool]string{true: "exists", false: "does not exist"}[exists],
						describeWrites(writes[k], l.ret))
				}
			}
		}
	}
	t.Logf("lists: %d LISTs; %d key states judged (%d of them listed), %d left open by racing or unknown writes; %d missed a write before them (strict: %v)",
		len(lists), judged, listedJudged, open, missed, strict)
}

// describeWrites lists the last writes of a key called before until, for a failure message.
func describeWrites(writes []porcupine.Operation, until int64) string {
	var b strings.Builder
	sorted := slices.Clone(writes)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Call < sorted[j].Call })
	sorted = slices.DeleteFunc(sorted, func(w porcupine.Operation) bool { return w.Call >= until })
	for _, w := range sorted[max(0, len(sorted)-6):] {
		ret := fmt.Sprint(w.Return)
		if w.Return == math.MaxInt64 {
			ret = "?"
		}
		fmt.Fprintf(&b, "  [%d, %s] %s\n", w.Call, ret, model.DescribeOperation(w.Input, w.Output))
	}
	return b.String()
}

// The LIST check judges what the history fixes and nothing else.
func TestDetermined(t *testing.T) {
	op := func(call, ret int64, kind opKind, out outcome) porcupine.Operation {
		return porcupine.Operation{Call: call, Return: ret, Input: input{key: "k", kind: kind, value: "v"}, Output: output{outcome: out}}
	}
	cases := []struct {
		name          string
		writes        []porcupine.Operation
		fixed, exists bool
	}{
		{"never written", nil, true, false},
		{"put before", []porcupine.Operation{op(0, 1, opPut, ok)}, true, true},
		{"deleted after a put", []porcupine.Operation{op(0, 1, opPut, ok), op(2, 3, opDelete, ok)}, true, false},
		{"put racing the list", []porcupine.Operation{op(0, 1, opPut, ok), op(8, 12, opDelete, ok)}, false, false},
		{"called after the list", []porcupine.Operation{op(0, 1, opPut, ok), op(20, 21, opDelete, ok)}, true, true},
		{"unknown before", []porcupine.Operation{op(0, 1, opPut, ok), op(2, math.MaxInt64, opDelete, unknown)}, false, false},
		{"two overlapping writes", []porcupine.Operation{op(0, 4, opPut, ok), op(2, 3, opDelete, ok)}, false, false},
	}
	for _, c := range cases {
		fixed, exists := determined(c.writes, 10, 15)
		if fixed != c.fixed || (fixed && exists != c.exists) {
			t.Errorf("%s: fixed %v exists %v, want %v %v", c.name, fixed, exists, c.fixed, c.exists)
		}
	}
}
