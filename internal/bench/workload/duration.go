package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration that YAML reads as "30s", "2m", "1h30m" (time.ParseDuration) or
// as a plain number of seconds (30, 0.5), and writes in the shortest exact form.
type Duration time.Duration

// D is d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String is the form MarshalYAML writes: "30s", "2m", "1h", else time.Duration's own form.
func (d Duration) String() string {
	t := time.Duration(d)
	switch {
	case t == 0:
		return "0s"
	case t%time.Hour == 0:
		return strconv.FormatInt(int64(t/time.Hour), 10) + "h"
	case t%time.Minute == 0:
		return strconv.FormatInt(int64(t/time.Minute), 10) + "m"
	default:
		return t.String()
	}
}

// ParseDuration reads the forms UnmarshalYAML accepts, for flags that want the same syntax.
func ParseDuration(s string) (Duration, error) {
	t := strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		// A bare number is seconds. Bound it so that the conversion cannot overflow.
		if math.IsNaN(f) || math.Abs(f) > float64(math.MaxInt64/int64(time.Second)) {
			return 0, fmt.Errorf("duration %q is out of range", s)
		}
		return Duration(math.Round(f * float64(time.Second))), nil
	}
	v, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("want a duration such as 30s, 2m or 1h30m (or a number of seconds), got %q", s)
	}
	return Duration(v), nil
}

// UnmarshalYAML reads "30s", "2m" or a number of seconds.
func (d *Duration) UnmarshalYAML(n *yaml.Node) (err error) {
	defer anchorAt(n, &err)
	if n.Kind != yaml.ScalarNode {
		return nodeErr(n, nil, "want a duration such as 30s, 2m or 1h30m (or a number of seconds)")
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		return nodeErr(n, nil, "%s", err.Error())
	}
	*d = v
	return nil
}

// MarshalYAML writes d as String does, which UnmarshalYAML reads back exactly.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }
