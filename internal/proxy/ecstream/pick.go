// Package ecstream is the proxy's erasure-code data path without its I/O: the commit barrier
// of an object's archive PUTs and the encoding of a body into archive streams (encode.go), the
// choice of the bytes a set of devices' answers decodes (pick.go), and a reader that decodes a
// range from archives a segment at a time, moving to another archive when one fails
// (reader.go). It knows nothing of rings, nodes or their health: the proxy
// (internal/proxy/ec*.go) says where archives are and opens them.
package ecstream

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cairn-store/cairn/internal/meta"
)

// Answer is what one device said of an object: the archive it holds (Err nil), none (Err
// wraps meta.ErrNotFound), or nothing (any other Err: it did not answer).
type Answer struct {
	Obj meta.Object
	Arc meta.ECArchive
	Err error
}

// NewAnswer makes the answer of a device that returned obj, err: an object that is no
// fragment archive (Swift's fragments, a stray whole copy) decodes nothing and says nothing of
// newer versions, so it counts as none.
func NewAnswer(obj meta.Object, err error) Answer {
	a := Answer{Obj: obj, Err: err}
	if err == nil {
		var ok bool
		if a.Arc, ok = obj.ECArchive(); !ok {
			a.Err = fmt.Errorf("an object without fragment archive metadata: %w", meta.ErrNotFound)
		}
	}
	return a
}

func (a Answer) answered() bool { return a.Err == nil || errors.Is(a.Err, meta.ErrNotFound) }

// Version is the bytes a set of answers decodes: archives of the same bytes (one PUT's: the
// same meta.ECArchive.SameData) with k distinct fragment indexes.
type Version struct {
	// Newest is the answer holding these bytes with the newest metadata (a POST reaches some
	// archives and not others): the object as it is served.
	Newest int
	Arc    meta.ECArchive
	// Holders are the answers holding each fragment index of these bytes.
	Holders map[int][]int
}

// Decodable picks, of the bytes the answers hold, the newest that k distinct fragment indexes
// decode. Without one, missing is the fewest more indexes any of them would need (k when no
// answer holds an archive).
func Decodable(answers []Answer, k int) (v *Version, missing int) {
	type group struct {
		arc     meta.ECArchive
		indexes map[int]bool
	}
	var groups []*group
	for _, a := range answers {
		if a.Err != nil {
			continue
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return g.arc.SameData(a.Arc) })
		if i < 0 {
			groups = append(groups, &group{arc: a.Arc, indexes: map[int]bool{}})
			i = len(groups) - 1
		}
		groups[i].indexes[a.Arc.Index] = true
	}
	missing = k
	var best *group
	for _, g := range groups {
		if len(g.indexes) < g.arc.K {
			missing = min(missing, g.arc.K-len(g.indexes))
			continue
		}
		if best == nil || g.arc.Written > best.arc.Written {
			best = g
		}
	}
	if best == nil {
		return nil, missing
	}
	v = &Version{Newest: -1, Arc: best.arc, Holders: map[int][]int{}}
	for i, a := range answers {
		if a.Err != nil || !a.Arc.SameData(best.arc) {
			continue
		}
		v.Holders[a.Arc.Index] = append(v.Holders[a.Arc.Index], i)
		if v.Newest < 0 || a.Obj.Timestamp > answers[v.Newest].Obj.Timestamp {
			v.Newest = i
		}
	}
	v.Arc = answers[v.Newest].Arc
	return v, 0
}

// NeedMore says whether answers of the primaries must be completed by the handoffs': a primary
// did not answer, or the newest bytes any holds are on fewer than k of them (a write made
// while primaries were down left its other archives on handoffs).
func NeedMore(answers []Answer, k int) bool {
	newest := -1
	for i, a := range answers {
		if !a.answered() {
			return true
		}
		if a.Err == nil && (newest < 0 || a.Arc.Written > answers[newest].Arc.Written) {
			newest = i
		}
	}
	if newest < 0 {
		return false
	}
	indexes := map[int]bool{}
	for _, a := range answers {
		if a.Err == nil && a.Arc.SameData(answers[newest].Arc) {
			indexes[a.Arc.Index] = true
		}
	}
	return len(indexes) < k
}

// Unanswered counts the answers of devices that did not answer, and returns the last of their
// errors.
func Unanswered(answers []Answer) (n int, last error) {
	for _, a := range answers {
		if !a.answered() {
			n++
			last = a.Err
		}
	}
	return n, last
}
