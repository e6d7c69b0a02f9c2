package meta

import (
	"errors"
	"testing"
)

func TestPreconditionCheck(t *testing.T) {
	live := &Object{Timestamp: 10, ETag: "abc", SysMeta: map[string]string{SysDeleteAt: "100"}}
	manifest := &Object{Timestamp: 11, Manifest: []Segment{}, SysMeta: map[string]string{SysManifestETag: "m-2"}}
	tomb := &Object{Timestamp: 12, Deleted: true}
	cases := []struct {
		name string
		p    Precondition
		cur  *Object
		ok   bool
	}{
		{"zero holds on nothing", Precondition{}, nil, true},
		{"zero holds on anything", Precondition{}, live, true},
		{"if-none-match on nothing", Precondition{IfNoneMatch: true}, nil, true},
		{"if-none-match on a tombstone", Precondition{IfNoneMatch: true}, tomb, true},
		{"if-none-match on a live object", Precondition{IfNoneMatch: true}, live, false},
		{"if-none-match on an expired object", Precondition{IfNoneMatch: true, ExpiredAt: 100}, live, true},
		{"if-none-match on a not yet expired object", Precondition{IfNoneMatch: true, ExpiredAt: 99}, live, false},
		{"if-match same etag", Precondition{IfMatch: []string{"x", "abc"}}, live, true},
		{"if-match other etag", Precondition{IfMatch: []string{"x"}}, live, false},
		{"if-match star", Precondition{IfMatch: []string{"*"}}, live, true},
		{"if-match star on nothing", Precondition{IfMatch: []string{"*"}}, nil, false},
		{"if-match on a tombstone", Precondition{IfMatch: []string{"*"}}, tomb, false},
		{"if-match uses a manifest's served etag", Precondition{IfMatch: []string{"m-2"}}, manifest, true},
		{"if-delete-at same", Precondition{IfDeleteAt: 100}, live, true},
		{"if-delete-at moved", Precondition{IfDeleteAt: 101}, live, false},
		{"if-delete-at removed", Precondition{IfDeleteAt: 100}, manifest, false},
		{"if-delete-at on nothing", Precondition{IfDeleteAt: 100}, nil, false},
		{"if-timestamp same", Precondition{IfTimestamp: 10}, live, true},
		{"if-timestamp changed", Precondition{IfTimestamp: 9}, live, false},
		{"if-timestamp on a tombstone", Precondition{IfTimestamp: 12}, tomb, false},
	}
	for _, c := range cases {
		err := c.p.Check(c.cur)
		if c.ok && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if !c.ok && !errors.Is(err, ErrPreconditionFailed) {
			t.Errorf("%s: got %v, want ErrPreconditionFailed", c.name, err)
		}
	}
}
