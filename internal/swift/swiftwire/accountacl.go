package swiftwire

import (
	"encoding/json"
	"strings"
)

// Account ACL roles, strongest first.
const (
	RoleNone      = ""
	RoleAdmin     = "admin"
	RoleReadWrite = "read-write"
	RoleReadOnly  = "read-only"
)

// ParseAccountACL validates a header value as tempauth does; it returns the canonical JSON
// ("" for an empty ACL) or the 400 text.
func ParseAccountACL(v string) (string, error) {
	v = strings.TrimSpace(v)
	var raw map[string]any
	if v == "" {
		return "", nil
	}
	if err := json.Unmarshal([]byte(v), &raw); err != nil || raw == nil {
		return "", BadRequest("Syntax error in input (%q)", v)
	}
	out := map[string][]string{}
	for key, val := range raw {
		if key != RoleAdmin && key != RoleReadWrite && key != RoleReadOnly {
			return "", BadRequest("Key %q not recognized", key)
		}
		list, ok := val.([]any)
		if !ok {
			return "", BadRequest("Value for key %q must be a list", key)
		}
		for _, g := range list {
			s, ok := g.(string)
			if !ok {
				return "", BadRequest("Elements of %q list must be strings", key)
			}
			out[key] = append(out[key], s)
		}
	}
	if len(out) == 0 {
		return "", nil
	}
	b, _ := json.Marshal(out)
	return string(b), nil
}
