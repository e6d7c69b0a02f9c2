package storage

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/vfs"
)

// A device and its index (the LSM, which may sit on a device of its own) identify each other:
// a random device ID is written into both when the device is created, in the file
// Dir/deviceIDFile and under the LSM key deviceIDKey. A device whose halves disagree, or whose
// other half is missing (the index moved away or not mounted, the data directory not mounted),
// is refused with a clear message rather than opened: an empty index opened over a full device
// would make every data file look like garbage, and writes to an unmounted mount point would
// land on the wrong disk.

// ErrDeviceIdentity is returned for a device whose data directory and index do not belong
// together.
var ErrDeviceIdentity = errors.New("device and index do not match")

const (
	deviceIDFile   = "device-id"
	deviceIDHeader = "cairn device id v1\n"
)

// deviceIDKey is the LSM key of the device ID; '!' sorts before every prefix of the engine and
// the index, which own lowercase letters.
var deviceIDKey = []byte("!device-id")

func newDeviceID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// readIDFile returns the device ID kept in dir, "" if there is none.
func readIDFile(fs vfs.FS, dir string) (string, error) {
	f, err := fs.Open(fs.PathJoin(dir, deviceIDFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the device ID: %w", err)
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := f.ReadAt(buf, 0)
	id, ok := strings.CutPrefix(string(buf[:n]), deviceIDHeader)
	id = strings.TrimSpace(id)
	if !ok || len(id) != 32 {
		return "", fmt.Errorf("the device ID file %s is damaged: %w", fs.PathJoin(dir, deviceIDFile), ErrDeviceIdentity)
	}
	return id, nil
}

func writeIDFile(fs vfs.FS, dir, id string) error {
	return vfs.WriteFileDurable(fs, fs.PathJoin(dir, deviceIDFile), []byte(deviceIDHeader+id+"\n"))
}

// readIDKey returns the device ID kept in the LSM, "" if there is none, and whether the LSM
// holds anything else.
func readIDKey(db *pebble.DB) (id string, other bool, err error) {
	v, closer, err := db.Get(deviceIDKey)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return "", false, fmt.Errorf("reading the device ID from the index: %w", err)
	default:
		id = string(v)
		closer.Close()
	}
	it, err := db.NewIter(nil)
	if err != nil {
		return "", false, fmt.Errorf("reading the index: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if !bytes.Equal(it.Key(), deviceIDKey) {
			other = true
			break
		}
	}
	return id, other, it.Error()
}

// hasDataFiles reports whether the device holds any object data file.
func hasDataFiles(fs vfs.FS, dir string) (bool, error) {
	objects := fs.PathJoin(dir, "objects")
	subs, err := fs.List(objects)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, s := range subs {
		if len(s) != 2 {
			continue
		}
		names, err := fs.List(fs.PathJoin(objects, s))
		if err != nil {
			return false, err
		}
		if len(names) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// openIndex opens the device's LSM at lsmDir and checks that it and the data directory dir
// belong together, creating the ID on both halves of a new device (and of a device made before
// IDs existed). open opens the LSM; mustExist makes it fail with pebble.ErrDBDoesNotExist
// instead of creating a new one.
func openIndex(fs vfs.FS, dir, lsmDir string, open func(mustExist bool) (*pebble.DB, error)) (*pebble.DB, error) {
	fileID, err := readIDFile(fs, dir)
	if err != nil {
		return nil, err
	}
	db, err := open(true)
	if errors.Is(err, pebble.ErrDBDoesNotExist) {
		if fileID != "" {
			return nil, fmt.Errorf("the device's index is missing (no LSM at %s; the device has ID %s): restore the index or mount its device; refusing to open the device: %w", lsmDir, fileID, ErrDeviceIdentity)
		}
		data, lerr := hasDataFiles(fs, dir)
		if lerr != nil {
			return nil, fmt.Errorf("looking for data files: %w", lerr)
		}
		if data {
			return nil, fmt.Errorf("the device holds data files but has no index (no LSM at %s) and no device ID: restore the index or mount its device; refusing to open the device: %w", lsmDir, ErrDeviceIdentity)
		}
		db, err = open(false) // a new device
	}
	if err != nil {
		return nil, fmt.Errorf("open LSM: %w", err)
	}
	fail := func(err error) (*pebble.DB, error) {
		db.Close()
		return nil, err
	}
	lsmID, other, err := readIDKey(db)
	if err != nil {
		return fail(err)
	}
	switch {
	case lsmID != "" && fileID == lsmID:
		return db, nil
	case lsmID != "" && fileID != "":
		return fail(fmt.Errorf("the index at %s belongs to device %s, but %s is device %s: refusing to open the device: %w", lsmDir, lsmID, dir, fileID, ErrDeviceIdentity))
	case lsmID == "" && fileID != "":
		return fail(fmt.Errorf("the index at %s carries no device ID, but %s is device %s (a new or foreign index): refusing to open the device: %w", lsmDir, dir, fileID, ErrDeviceIdentity))
	case lsmID != "" && other:
		return fail(fmt.Errorf("%s has no device ID file, but its index at %s belongs to device %s and holds data: is the data directory's disk mounted? refusing to open the device: %w", dir, lsmDir, lsmID, ErrDeviceIdentity))
	case lsmID != "":
		// The index is new and empty: a crash interrupted the creation of the device.
		if err := writeIDFile(fs, dir, lsmID); err != nil {
			return fail(fmt.Errorf("writing the device ID file: %w", err))
		}
		return db, nil
	}
	// Neither half has an ID: a new device, or one made before IDs existed. The LSM first,
	// then the file: a crash in between leaves an index with an ID and no file, which the case
	// above completes if the index holds nothing else.
	id := newDeviceID()
	if err := db.Set(deviceIDKey, []byte(id), pebble.Sync); err != nil {
		return fail(fmt.Errorf("writing the device ID to the index: %w", err))
	}
	if err := writeIDFile(fs, dir, id); err != nil {
		return fail(fmt.Errorf("writing the device ID file: %w", err))
	}
	return db, nil
}
