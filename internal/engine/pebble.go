package engine

import (
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// ValueSeparationMinSize is the smallest inline object value that Pebble moves out of its
// sstables into blob files. Below a few KiB, a separated value costs an extra random read
// for little saving; above, keeping object bytes out of compactions cuts write amplification,
// which is what inline objects of up to 64 KiB would otherwise pay at every level.
const ValueSeparationMinSize = 4 << 10

// TunePebble adjusts the options of a device's LSM for the engine; whoever opens the DB should
// call it (after filling in the rest, before pebble.Open). It enables value separation (blob
// files), which Pebble v2.1 supports from FormatValueSeparation on. The option still sits under
// Options.Experimental; the engine's tests, the crash test included, run with it on.
func TunePebble(o *pebble.Options) {
	if o.FormatMajorVersion < pebble.FormatValueSeparation {
		o.FormatMajorVersion = pebble.FormatValueSeparation
	}
	o.Experimental.ValueSeparationPolicy = func() pebble.ValueSeparationPolicy {
		return pebble.ValueSeparationPolicy{
			Enabled:               true,
			MinimumSize:           ValueSeparationMinSize,
			MaxBlobReferenceDepth: 10,
			RewriteMinimumAge:     5 * time.Minute,
			// Rewrite blob files once a fifth of their bytes are overwritten or deleted
			// objects, bounding space amplification for churning small objects.
			TargetGarbageRatio: 0.2,
		}
	}
}
