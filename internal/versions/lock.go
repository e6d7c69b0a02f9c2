package versions

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
)

// Object Lock (S3's WORM retention): a version may carry a retention (GOVERNANCE or
// COMPLIANCE, until a date) and a legal hold. While either holds, nobody may remove the
// version — the root key included — except that a GOVERNANCE retention gives way to a caller
// allowed to bypass it. The rules live here, with the version store, so that every way of
// removing a version (S3, Swift's ?version-id, lifecycle) meets them. A container with Object
// Lock keeps versioning on for good.

// Container metadata of Object Lock: that it is enabled, and the default retention new
// versions get ("GOVERNANCE 30d", "COMPLIANCE 1y"; empty: none).
const (
	KeyLockEnabled = "sys:object-lock"
	KeyLockDefault = "sys:object-lock-default"
)

// SysMeta keys of a version's lock: the mode, the date it holds until (RFC 3339, UTC), and
// the legal hold ("ON").
const (
	SysLockMode      = "lock-mode"
	SysLockUntil     = "lock-until"
	SysLockLegalHold = "lock-legal-hold"
)

// Retention modes.
const (
	Governance = "GOVERNANCE"
	Compliance = "COMPLIANCE"
)

// ErrLocked: the version is protected by a retention or a legal hold.
var ErrLocked = errors.New("versions: the version is protected by Object Lock")

// ErrLockedConfig: a change a container with Object Lock does not allow (suspending
// versioning).
var ErrLockedConfig = errors.New("versions: Object Lock is enabled on the container")

// ErrRetentionChange: a retention may not be changed so (a COMPLIANCE one shortened, or a
// GOVERNANCE one shortened without bypassing it).
var ErrRetentionChange = errors.New("versions: the retention may not be changed so")

// Retention is a version's retention; the zero value is none.
type Retention struct {
	Mode  string
	Until time.Time
}

// IsZero reports whether there is no retention.
func (r Retention) IsZero() bool { return r.Mode == "" }

// RetentionOf reads a version's retention.
func RetentionOf(o *meta.Object) Retention {
	mode := o.SysMeta[SysLockMode]
	if mode == "" {
		return Retention{}
	}
	until, err := time.Parse(time.RFC3339Nano, o.SysMeta[SysLockUntil])
	if err != nil {
		// Damaged: hold it for good rather than let it go.
		return Retention{Mode: Compliance, Until: time.Unix(1<<40, 0)}
	}
	return Retention{Mode: mode, Until: until}
}

// LegalHoldOf reads whether a version is under a legal hold.
func LegalHoldOf(o *meta.Object) bool { return o.SysMeta[SysLockLegalHold] == "ON" }

// SetRetention writes a retention into sys (the zero retention removes it).
func SetRetention(sys map[string]string, r Retention) {
	if r.IsZero() {
		sys[SysLockMode], sys[SysLockUntil] = "", ""
		return
	}
	sys[SysLockMode], sys[SysLockUntil] = r.Mode, r.Until.UTC().Format(time.RFC3339Nano)
}

// SetLegalHold writes a legal hold into sys ("ON" or "OFF": once set, a version answers it).
func SetLegalHold(sys map[string]string, on bool) {
	if on {
		sys[SysLockLegalHold] = "ON"
	} else {
		sys[SysLockLegalHold] = "OFF"
	}
}

// CheckRemove decides whether a version may be removed at now: not under a legal hold, not
// within a COMPLIANCE retention, and within a GOVERNANCE one only when bypassing it.
func CheckRemove(o *meta.Object, now time.Time, bypassGovernance bool) error {
	if LegalHoldOf(o) {
		return fmt.Errorf("%w: legal hold", ErrLocked)
	}
	r := RetentionOf(o)
	if r.IsZero() || !now.Before(r.Until) {
		return nil
	}
	if r.Mode == Governance && bypassGovernance {
		return nil
	}
	return fmt.Errorf("%w: %s retention until %s", ErrLocked, r.Mode, r.Until.Format(time.RFC3339))
}

// CheckRetentionChange decides whether a version's retention old may become new at now: an
// expired one may change freely; a COMPLIANCE one may only be extended; a GOVERNANCE one may be
// extended or made COMPLIANCE, and shortened, removed or otherwise weakened only when bypassing.
func CheckRetentionChange(old, new Retention, now time.Time, bypassGovernance bool) error {
	if old.IsZero() || !now.Before(old.Until) {
		return nil
	}
	extends := !new.IsZero() && !new.Until.Before(old.Until)
	switch old.Mode {
	case Compliance:
		if extends && new.Mode == Compliance {
			return nil
		}
	case Governance:
		if extends || bypassGovernance {
			return nil
		}
	}
	return fmt.Errorf("%w: %s until %s", ErrRetentionChange, old.Mode, old.Until.Format(time.RFC3339))
}

// DefaultRetention is a container's default retention: a mode and a period in days or years.
type DefaultRetention struct {
	Mode  string
	Days  int
	Years int
}

// IsZero reports whether there is no default retention.
func (d DefaultRetention) IsZero() bool { return d.Mode == "" }

// Encode writes the default as the container keeps it ("GOVERNANCE 30d").
func (d DefaultRetention) Encode() string {
	switch {
	case d.IsZero():
		return ""
	case d.Years > 0:
		return d.Mode + " " + strconv.Itoa(d.Years) + "y"
	}
	return d.Mode + " " + strconv.Itoa(d.Days) + "d"
}

// DefaultRetentionOf reads a container's default retention.
func DefaultRetentionOf(c meta.Container) DefaultRetention {
	mode, period, ok := strings.Cut(c.Meta[KeyLockDefault], " ")
	if !ok || len(period) < 2 {
		return DefaultRetention{}
	}
	n, err := strconv.Atoi(period[:len(period)-1])
	if err != nil || n <= 0 {
		return DefaultRetention{}
	}
	if period[len(period)-1] == 'y' {
		return DefaultRetention{Mode: mode, Years: n}
	}
	return DefaultRetention{Mode: mode, Days: n}
}

// From is the retention the default gives a version written at now.
func (d DefaultRetention) From(now time.Time) Retention {
	if d.IsZero() {
		return Retention{}
	}
	return Retention{Mode: d.Mode, Until: now.AddDate(d.Years, 0, d.Days).UTC()}
}

// LockEnabled reports whether a container has Object Lock.
func LockEnabled(c meta.Container) bool { return c.Meta[KeyLockEnabled] == "Enabled" }
