package advisor

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalidPolicy is wrapped by a durability policy that cannot be.
var ErrInvalidPolicy = errors.New("invalid durability policy")

// Policy is the durability policy of the cluster to size: N replicas or an erasure code of K
// data and M parity fragments, over Zones zones.
type Policy struct {
	Replicas int `json:"replicas,omitempty"`
	K        int `json:"ec_k,omitempty"`
	M        int `json:"ec_m,omitempty"`
	Zones    int `json:"zones"`
}

// ParsePolicy builds a policy from the command line's --replicas, --ec K+M and --zones; ec
// empty and replicas 0 mean Swift's default, 3 replicas.
func ParsePolicy(replicas int, ec string, zones int) (Policy, error) {
	p := Policy{Replicas: replicas, Zones: zones}
	if ec != "" {
		if replicas != 0 {
			return Policy{}, fmt.Errorf("%w: give --replicas or --ec, not both", ErrInvalidPolicy)
		}
		k, m, ok := strings.Cut(ec, "+")
		var err1, err2 error
		p.K, err1 = strconv.Atoi(strings.TrimSpace(k))
		p.M, err2 = strconv.Atoi(strings.TrimSpace(m))
		if !ok || err1 != nil || err2 != nil {
			return Policy{}, fmt.Errorf("%w: --ec %q: want K+M, as 4+2", ErrInvalidPolicy, ec)
		}
	} else if replicas == 0 {
		p.Replicas = 3
	}
	if p.Zones == 0 {
		p.Zones = 1
	}
	return p, p.Validate()
}

// Validate checks the policy.
func (p Policy) Validate() error {
	switch {
	case p.Replicas > 0 && p.K > 0:
		return fmt.Errorf("%w: replicas and an erasure code both given", ErrInvalidPolicy)
	case p.Replicas == 0 && p.K == 0:
		return fmt.Errorf("%w: neither replicas nor an erasure code given", ErrInvalidPolicy)
	case p.Replicas < 0 || p.Replicas > 10:
		return fmt.Errorf("%w: replicas %d: want 1 to 10", ErrInvalidPolicy, p.Replicas)
	case p.K < 0 || p.M < 0 || p.K > 0 && (p.M < 1 || p.K+p.M > 32):
		return fmt.Errorf("%w: erasure code %d+%d: want K ≥ 1, M ≥ 1, K+M ≤ 32", ErrInvalidPolicy, p.K, p.M)
	case p.Zones < 1:
		return fmt.Errorf("%w: zones %d: want ≥ 1", ErrInvalidPolicy, p.Zones)
	}
	return nil
}

func (p Policy) isEC() bool { return p.K > 0 }

// Overhead is raw bytes stored per usable byte.
func (p Policy) Overhead() float64 {
	if p.isEC() {
		return float64(p.K+p.M) / float64(p.K)
	}
	return float64(p.Replicas)
}

// writeVisits is how many storage nodes a write (or delete) goes to; readVisits how many a
// read needs (a replica, or the K data fragments).
func (p Policy) writeVisits() float64 {
	if p.isEC() {
		return float64(p.K + p.M)
	}
	return float64(p.Replicas)
}

func (p Policy) readVisits() float64 {
	if p.isEC() {
		return float64(p.K)
	}
	return 1
}

// pieceSize is the bytes one storage visit handles for an object of size bytes.
func (p Policy) pieceSize(size float64) float64 {
	if p.isEC() {
		return size / float64(p.K)
	}
	return size
}

// MinStorageNodes is the fewest storage nodes that hold every replica or fragment of an
// object on a different node, and every zone at least one node.
func (p Policy) MinStorageNodes() int {
	n := p.Replicas
	if p.isEC() {
		n = p.K + p.M
	}
	return max(n, p.Zones)
}

// String is "3 replicas" or "EC 4+2", with the zones.
func (p Policy) String() string {
	s := fmt.Sprintf("%d replicas", p.Replicas)
	if p.isEC() {
		s = fmt.Sprintf("EC %d+%d", p.K, p.M)
	}
	return fmt.Sprintf("%s, %d zone%s", s, p.Zones, plural(p.Zones))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
