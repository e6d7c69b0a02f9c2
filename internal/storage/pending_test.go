package storage

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// A write's updates to several listings are kept apart (one key each), read back as written,
// and the first keeps the form nodes wrote before there could be several.
func TestPendingUpdatesOfOneWrite(t *testing.T) {
	base := pendingUpdate{account: "acct", cont: "box", entry: meta.ListEntry{Name: "o", Timestamp: 42, Size: 3, ETag: "e", ContentType: "text/plain"}}
	keys := map[string]bool{}
	for slot, node := range []string{"a:1", "b:1", "c:1"} {
		u := base
		u.target, u.slot = nodeclient.ContainerUpdate{Node: node, Device: "d0", Part: 7}, uint8(slot)
		v := u.encode()
		if want := byte(1 + min(slot, 1)); v[0] != want {
			t.Errorf("slot %d: version %d, want %d", slot, v[0], want)
		}
		got, err := decodePending(v)
		if err != nil || !reflect.DeepEqual(*got, u) {
			t.Fatalf("slot %d: %+v, %v; want %+v", slot, got, err, u)
		}
		if !bytes.Equal(got.key(), u.key()) || keys[string(u.key())] {
			t.Fatalf("slot %d: key %q not its own", slot, u.key())
		}
		keys[string(u.key())] = true
	}
	// A version-2 value that says slot 0, or lost its slot, is not believed.
	u := base
	u.slot = 1
	v := u.encode()
	for _, bad := range [][]byte{append(v[:len(v)-1:len(v)-1], 0), v[:len(v)-1]} {
		if _, err := decodePending(bad); !errors.Is(err, meta.ErrCorrupt) {
			t.Errorf("%q: %v, want ErrCorrupt", bad, err)
		}
	}
}

// An entry whose Last-Modified is not its timestamp (an S3 metadata change) keeps it through
// the queue, in a form of its own (version 3), in any slot; a version-3 value without it is not
// believed.
func TestPendingUpdateKeepsModified(t *testing.T) {
	for _, slot := range []uint8{0, 2} {
		u := pendingUpdate{target: nodeclient.ContainerUpdate{Node: "a:1", Device: "d0", Part: 7}, account: "acct", cont: "box", slot: slot,
			entry: meta.ListEntry{Name: "o", Timestamp: 42, Size: 3, ETag: "e", ContentType: "text/plain", Modified: 40}}
		v := u.encode()
		if v[0] != 3 {
			t.Errorf("slot %d: version %d, want 3", slot, v[0])
		}
		got, err := decodePending(v)
		if err != nil || !reflect.DeepEqual(*got, u) {
			t.Fatalf("slot %d: %+v, %v; want %+v", slot, got, err, u)
		}
		zero := append(v[:len(v)-16:len(v)-16], []byte("0000000000000000")...)
		for _, bad := range [][]byte{v[:len(v)-1], zero} {
			if _, err := decodePending(bad); !errors.Is(err, meta.ErrCorrupt) {
				t.Errorf("%q: %v, want ErrCorrupt", bad, err)
			}
		}
	}
}
