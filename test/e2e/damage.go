package e2e

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// FlipByte flips a bit of the byte at off in a file (damage a disk could do).
func FlipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x01
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// FlipLSM flips a bit in the middle of the one value under prefix whose key ends with the
// container's length-prefixed name and the object's.
func FlipLSM(t *testing.T, db *pebble.DB, prefix byte, container, object string) {
	t.Helper()
	suffix := append(append([]byte{byte(len(container))}, container...), object...)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefix}, UpperBound: []byte{prefix + 1}})
	if err != nil {
		t.Fatal(err)
	}
	var key, val []byte
	for ok := it.First(); ok; ok = it.Next() {
		if bytes.HasSuffix(it.Key(), suffix) {
			key, val = bytes.Clone(it.Key()), bytes.Clone(it.Value())
		}
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if key == nil {
		t.Fatalf("no key %c…%q", prefix, suffix)
	}
	val[len(val)/2] ^= 0x04
	if err := db.Set(key, val, pebble.Sync); err != nil {
		t.Fatal(err)
	}
}

// QuietPebble is a Pebble logger for tests that open a device's LSM: silent, but fatal errors panic.
type QuietPebble struct{}

func (QuietPebble) Infof(string, ...any)      {}
func (QuietPebble) Errorf(f string, a ...any) {}
func (QuietPebble) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
