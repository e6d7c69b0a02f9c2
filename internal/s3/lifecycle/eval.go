package lifecycle

import (
	"strings"
	"time"
)

// Version is what the evaluation needs to know of one version of an object (in a bucket never
// versioned, of the object itself, which is current).
type Version struct {
	Key  string
	Size int64
	Tags map[string]string
	// Modified is the version's Last-Modified (its creation).
	Modified time.Time
	// Current is true for the object's current version (a delete marker included).
	Current      bool
	DeleteMarker bool
	// NoncurrentSince is when a noncurrent version became so: the next newer version's
	// creation.
	NoncurrentSince time.Time
	// NewerNoncurrent counts the key's noncurrent versions newer than this one.
	NewerNoncurrent int
	// OthersLeft counts the key's other versions (for a current delete marker: 0 when it is
	// the only one left, an "expired object delete marker").
	OthersLeft int
}

// Action is what a rule set says to do with a version.
type Action int

const (
	None Action = iota
	// Expire: the current version expires: in a versioned bucket a delete marker is written,
	// otherwise the object is deleted.
	Expire
	// RemoveVersion: the version (a noncurrent one, or an expired delete marker) is removed for
	// good.
	RemoveVersion
)

func (a Action) String() string {
	switch a {
	case Expire:
		return "expire"
	case RemoveVersion:
		return "remove-version"
	}
	return "none"
}

// Due is when an action counted in days from t is due: days later, rounded up to the next
// day boundary (midnight UTC for a 24-hour day), as S3 counts. day is the length of a day
// (24 hours; tests shorten it).
func Due(t time.Time, days int, day time.Duration) time.Time {
	d := t.Add(time.Duration(days) * day)
	if r := d.Truncate(day); !r.Equal(d) {
		return r.Add(day)
	}
	return d
}

// matches reports whether a version is in the filter's scope. A delete marker has neither
// tags nor size: a rule that needs tags never applies to one, and size bounds are not applied.
func (f *Filter) matches(v *Version) bool {
	if !strings.HasPrefix(v.Key, f.Prefix) {
		return false
	}
	for _, t := range f.Tags {
		if got, ok := v.Tags[t.Key]; !ok || got != t.Value {
			return false
		}
	}
	if v.DeleteMarker {
		return true
	}
	if f.HasGreater && v.Size <= f.SizeGreaterThan {
		return false
	}
	if f.HasLess && v.Size >= f.SizeLessThan {
		return false
	}
	return true
}

// NeedsTags reports whether any enabled rule filters on tags (the caller reads a version's
// tags only then).
func (c *Config) NeedsTags() bool {
	for i := range c.Rules {
		if c.Rules[i].Enabled && len(c.Rules[i].Filter.Tags) > 0 {
			return true
		}
	}
	return false
}

// ActsOnVersions reports whether any enabled rule acts on objects (rather than on uploads only).
func (c *Config) ActsOnVersions() bool {
	for _, r := range c.Rules {
		if r.Enabled && (r.ExpireDays > 0 || !r.ExpireDate.IsZero() || r.ExpiredObjectDeleteMarker || r.NoncurrentDays > 0) {
			return true
		}
	}
	return false
}

// ActsOnUploads reports whether any enabled rule aborts incomplete multipart uploads.
func (c *Config) ActsOnUploads() bool {
	for _, r := range c.Rules {
		if r.Enabled && r.AbortDays > 0 {
			return true
		}
	}
	return false
}

// Decide says what the enabled rules do with a version at now. When several rules apply, the
// version goes if any says so (S3: expiration wins over everything else, and of two
// expirations the earlier applies, which for one pass at now is the same).
func (c *Config) Decide(v Version, now time.Time, day time.Duration) Action {
	for i := range c.Rules {
		r := &c.Rules[i]
		if !r.Enabled || !r.Filter.matches(&v) {
			continue
		}
		switch {
		case v.Current && v.DeleteMarker:
			if r.ExpiredObjectDeleteMarker && v.OthersLeft == 0 {
				return RemoveVersion
			}
		case v.Current:
			if r.ExpireDays > 0 && !now.Before(Due(v.Modified, r.ExpireDays, day)) {
				return Expire
			}
			if !r.ExpireDate.IsZero() && !now.Before(r.ExpireDate) {
				return Expire
			}
		default:
			if r.NoncurrentDays > 0 && v.NewerNoncurrent >= r.NewerNoncurrent &&
				!now.Before(Due(v.NoncurrentSince, r.NoncurrentDays, day)) {
				return RemoveVersion
			}
		}
	}
	return None
}

// AbortUpload says whether an upload of key initiated at initiated is aborted at now.
func (c *Config) AbortUpload(key string, initiated, now time.Time, day time.Duration) bool {
	for i := range c.Rules {
		r := &c.Rules[i]
		// Tags cannot scope an abort (refused at Parse); sizes are unknown before completion.
		if !r.Enabled || r.AbortDays == 0 || !strings.HasPrefix(key, r.Filter.Prefix) {
			continue
		}
		if !now.Before(Due(initiated, r.AbortDays, day)) {
			return true
		}
	}
	return false
}
