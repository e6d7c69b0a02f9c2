// Package versions keeps the earlier versions of objects for both front ends: S3 bucket
// versioning and Swift's object versioning (X-Versions-Enabled) are one state of a container,
// laid out as OpenStack Swift's object_versioning middleware lays it out (and as its s3api maps
// S3 onto it), so that a version written through one API is the same version through the other,
// and Swift's own proxy finds Cairn's versions where it keeps its own.
//
// A versioned container has a hidden versions container ("\x00versions\x00<container>", in the
// reserved namespace, same account and storage policy). Each version of an object is an object
// there named after the object and the version's timestamp inverted (so that a listing meets an
// object's newest version first); the object in the container itself is then a static symlink
// to its current version, marked as a version link. A delete writes a zero-byte delete marker
// as a version and removes the link. An object written while versioning was never on, or
// suspended, is the "null" version: a plain object in the container itself.
//
// The package works through the proxy only; the front ends turn requests into its calls and
// its answers into their protocols.
package versions

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/cairn-store/cairn/internal/meta"
)

// Container metadata of the setting, as the front ends store it: whether versioning is on
// ("true"/"false": suspended), and the versions container (set once versioning was ever on).
const (
	KeyEnabled   = "sys:versions-enabled"
	KeyContainer = "sys:versions-container"
)

// SysLink marks the object in the container itself that links to its current version (Swift's
// X-Object-Sysmeta-Versions-Symlink): a symlink anyone else made is an object like any other.
const SysLink = "versions-symlink"

// DeleteMarkerType is the content type of a delete marker (Swift's, with a parameter no client
// sets), which is how listings and reads tell one from an object.
const DeleteMarkerType = "application/x-deleted;swift_versions_deleted=1"

// Null is the version ID of an object written while versioning was never on or suspended.
const Null = "null"

// ErrNoSuchVersion: the version named does not exist (or is not a version of that object).
var ErrNoSuchVersion = errors.New("versions: no such version")

// ErrInvalidID: a version ID that is neither "null" nor a version's timestamp.
var ErrInvalidID = errors.New("versions: invalid version id")

// ErrNotVersioned: a version-aware operation on a container that was never versioned.
var ErrNotVersioned = errors.New("versions: the container is not versioned")

// ErrNoVersionsContainer: versioning is on but its versions container is gone (Swift: 500,
// "re-enable object versioning").
var ErrNoVersionsContainer = errors.New("versions: the versions container does not exist")

// State is a container's versioning.
type State struct {
	// Container is the versions container, "" when versioning was never on.
	Container string
	// Enabled is true while versioning is on (false: never, or suspended).
	Enabled bool
}

// StateOf reads a container's versioning from its metadata.
func StateOf(c meta.Container) State {
	return State{Container: c.Meta[KeyContainer], Enabled: c.Meta[KeyContainer] != "" && c.Meta[KeyEnabled] == "true"}
}

// Versioned reports whether versioning was ever on: versions may exist.
func (s State) Versioned() bool { return s.Container != "" }

// Suspended reports whether versioning was on and is now off.
func (s State) Suspended() bool { return s.Container != "" && !s.Enabled }

// ContainerFor is the versions container of a container.
func ContainerFor(container string) string {
	return meta.ReservedPrefix + "versions" + meta.ReservedPrefix + container
}

// swiftUnit is the resolution of Swift's timestamps: a version's is a multiple of it, so that
// its ID and inverted name are Swift's, without the offset Swift cannot invert.
const swiftUnit = 10_000

// maxUnits is what Swift inverts a timestamp against (999999999999999 units of 10 µs).
const maxUnits = 999_999_999_999_999

// maxTimestampUnits is the last unit a meta.Timestamp (nanoseconds in an int64, to 2262) holds:
// a name or ID past it names no version Cairn can have written.
const maxTimestampUnits = math.MaxInt64 / swiftUnit

// ObjectName is the name, in the versions container, of the version of object at ts (Cairn's
// name: the cluster adds the reserved prefix Swift's has in front).
func ObjectName(object string, ts meta.Timestamp) string {
	return object + meta.ReservedPrefix + formatUnits(maxUnits-int64(ts)/swiftUnit)
}

// Prefix is what the names of an object's versions start with.
func Prefix(object string) string { return object + meta.ReservedPrefix }

// SplitObjectName reads a versions container's object name back into the object and the
// version's timestamp; ok is false for a name ObjectName did not make.
func SplitObjectName(name string) (object string, ts meta.Timestamp, ok bool) {
	i := strings.LastIndex(name, meta.ReservedPrefix)
	if i < 0 {
		return "", 0, false
	}
	inv, err := parseUnits(name[i+1:])
	if err != nil || inv > maxUnits || maxUnits-inv > maxTimestampUnits {
		return "", 0, false
	}
	return name[:i], meta.Timestamp((maxUnits - inv) * swiftUnit), true
}

// ID is the version ID of the version at ts: its timestamp as Swift writes it.
func ID(ts meta.Timestamp) string { return formatUnits(int64(ts) / swiftUnit) }

// ParseID reads a version ID other than Null.
func ParseID(id string) (meta.Timestamp, error) {
	u, err := parseUnits(id)
	if err != nil || u > maxTimestampUnits {
		return 0, fmt.Errorf("%w: %q", ErrInvalidID, id)
	}
	return meta.Timestamp(u * swiftUnit), nil
}

func formatUnits(u int64) string { return fmt.Sprintf("%010d.%05d", u/100_000, u%100_000) }

// parseUnits reads "seconds[.fraction]" in units of 10 µs, as Swift's Timestamp reads a
// version ID (at most five decimals are kept; Swift rounds, IDs Cairn gives have five).
func parseUnits(s string) (int64, error) {
	secs, frac, _ := strings.Cut(s, ".")
	if secs == "" || len(secs) > 10 || len(frac) > 5 || strings.ContainsAny(secs+frac, "+-") {
		return 0, ErrInvalidID
	}
	n, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return 0, ErrInvalidID
	}
	var f int64
	if frac != "" {
		if f, err = strconv.ParseInt(frac, 10, 64); err != nil {
			return 0, ErrInvalidID
		}
		for i := len(frac); i < 5; i++ {
			f *= 10
		}
	}
	return n*100_000 + f, nil
}

var clockMu sync.Mutex

// newTimestamp stamps a new version: a multiple of Swift's resolution, later than any
// timestamp this process gave before (meta.Now), with the unit's remaining nanoseconds spent,
// so that the next version of the same object cannot get the same name, and the version's link
// (a nanosecond later) sorts after it.
func newTimestamp() meta.Timestamp {
	clockMu.Lock()
	defer clockMu.Unlock()
	ts := (meta.Now()/swiftUnit + 1) * swiftUnit
	meta.AdvanceClock(ts + swiftUnit - 1)
	return ts
}
