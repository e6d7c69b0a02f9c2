package swiftwire

import (
	"fmt"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
)

// Timestamp formats a timestamp as Swift's X-Timestamp: seconds with five decimals.
func Timestamp(t meta.Timestamp) string {
	n := int64(t)
	return fmt.Sprintf("%010d.%05d", n/1e9, n%1e9/1e4)
}

// LastModified is Swift's Last-Modified of a timestamp: HTTP dates have whole seconds and Swift
// rounds up, so that the date is never earlier than the write.
func LastModified(t meta.Timestamp) time.Time {
	tm := t.Time()
	if tm.Truncate(time.Second).Equal(tm) {
		return tm
	}
	return tm.Truncate(time.Second).Add(time.Second)
}

// ListingTime is the last_modified of a listing entry: ISO 8601 with microseconds, no zone.
func ListingTime(t meta.Timestamp) string {
	return t.Time().Format("2006-01-02T15:04:05.000000")
}
