package advisor

import (
	"fmt"
	"strconv"
	"strings"
)

// Command-line quantities. Every one needs its unit: a bare number would be a guess between
// MB/s and ops/s, or between TB and TiB.

// ParseCapacity reads a usable capacity as decimal terabytes: 500TB, 2PB, 800TiB, 1.5PiB.
func ParseCapacity(s string) (float64, error) {
	units := []struct {
		suffix string
		tb     float64
	}{{"PIB", 1125.899906842624}, {"TIB", 1.099511627776}, {"GIB", 0.001073741824},
		{"PB", 1000}, {"TB", 1}, {"GB", 0.001}}
	v, u, err := splitUnit(s)
	if err != nil {
		return 0, fmt.Errorf("%w: capacity %q: %w", ErrInvalidRequest, s, err)
	}
	for _, unit := range units {
		if u == unit.suffix {
			return v * unit.tb, nil
		}
	}
	return 0, fmt.Errorf("%w: capacity %q: give a unit: TB, PB, TiB or PiB (as 500TB)", ErrInvalidRequest, s)
}

// ParseThroughput reads a throughput in MB/s (also GB/s) or ops/s: 800MB/s, 2GB/s, 5000ops/s.
func ParseThroughput(s string) (mbps, ops float64, err error) {
	v, u, err := splitUnit(s)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: throughput %q: %w", ErrInvalidRequest, s, err)
	}
	switch u {
	case "MB/S":
		return v, 0, nil
	case "GB/S":
		return v * 1000, 0, nil
	case "OPS/S", "OPS", "REQ/S":
		return 0, v, nil
	}
	return 0, 0, fmt.Errorf("%w: throughput %q: give a unit: MB/s, GB/s or ops/s (as 800MB/s)", ErrInvalidRequest, s)
}

// ParseBudget reads an amount in the catalog's currency: 250000, 250k, 1.2M.
func ParseBudget(s string) (float64, error) {
	v, u, err := splitUnit(s)
	if err != nil {
		return 0, fmt.Errorf("%w: budget %q: %w", ErrInvalidRequest, s, err)
	}
	switch u {
	case "":
		return v, nil
	case "K":
		return v * 1e3, nil
	case "M":
		return v * 1e6, nil
	}
	return 0, fmt.Errorf("%w: budget %q: give a number in the catalog's currency, as 250000 or 250k", ErrInvalidRequest, s)
}

// splitUnit splits "1.5 PB" into 1.5 and "PB" (upper case); the number must be > 0.
func splitUnit(s string) (float64, string, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	if i < 0 {
		i = len(s)
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || v <= 0 {
		return 0, "", fmt.Errorf("want a positive number")
	}
	return v, strings.ToUpper(strings.TrimSpace(s[i:])), nil
}
