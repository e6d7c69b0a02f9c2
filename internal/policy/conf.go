package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ConfName is Swift's configuration file, read from the ring directory (Swift's /etc/swift
// layout): its [storage-policy:N] sections define the policies.
const ConfName = "swift.conf"

// sectionPrefix starts the name of a policy's section; the index follows.
const sectionPrefix = "storage-policy:"

// ReadDir reads the policies of the swift.conf in dir: the legacy set (policy 0, "Policy-0")
// when there is no such file or it defines none.
func ReadDir(dir string) (*Set, error) {
	path := filepath.Join(dir, ConfName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Legacy(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("storage policies: %w", err)
	}
	s, err := Parse(string(data))
	if err != nil {
		return nil, fmt.Errorf("storage policies in %s: %w", path, err)
	}
	return s, nil
}

// Parse reads the policies of a swift.conf's text, as Swift's parse_storage_policies does:
// each [storage-policy:N] section is policy N, with the options name, aliases (comma-separated),
// default, deprecated (Swift's true values: true, yes, on, 1, t, y), policy_type (replication,
// the default, or erasure_coding), diskfile_module (accepted and ignored: Cairn has one way of
// storing), and for erasure_coding ec_type, ec_num_data_fragments, ec_num_parity_fragments,
// ec_object_segment_size and ec_duplication_factor. Any other option is refused, as Swift
// refuses it.
func Parse(text string) (*Set, error) {
	sections, order := parseINI(text)
	var ps []Policy
	for _, name := range order {
		idx, ok := strings.CutPrefix(name, sectionPrefix)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(idx))
		if err != nil {
			return nil, fmt.Errorf("%w: [%s]: invalid index %q", ErrInvalid, name, idx)
		}
		p, err := fromOptions(n, sections[name])
		if err != nil {
			return nil, fmt.Errorf("[%s]: %w", name, err)
		}
		ps = append(ps, p)
	}
	return New(ps...)
}

// fromOptions builds policy index from its section's options.
func fromOptions(index int, opts map[string]string) (Policy, error) {
	p := Policy{Index: index, Type: Replication}
	if t, ok := opts["policy_type"]; ok {
		p.Type = Type(t)
	}
	var err error
	num := func(key string, into *int) {
		v, ok := opts[key]
		if !ok || err != nil {
			return
		}
		if *into, err = strconv.Atoi(v); err != nil {
			err = fmt.Errorf("%w: invalid %s %q", ErrInvalid, key, v)
		}
	}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first unknown option reported is always the same
	for _, k := range keys {
		v := opts[k]
		switch k {
		case "name":
			p.Name = v
		case "aliases":
			for _, a := range strings.Split(v, ",") {
				if a = strings.TrimSpace(a); a != "" && a != opts["name"] {
					p.Aliases = append(p.Aliases, a)
				}
			}
		case "default":
			p.Default = trueValue(v)
		case "deprecated":
			p.Deprecated = trueValue(v)
		case "policy_type", "diskfile_module":
		case "ec_type":
			p.EC.Scheme = v
		case "ec_num_data_fragments", "ec_num_parity_fragments", "ec_object_segment_size", "ec_duplication_factor":
		default:
			return Policy{}, fmt.Errorf("%w: invalid option %q in a storage-policy section", ErrInvalid, k)
		}
		if strings.HasPrefix(k, "ec_") && p.Type != ErasureCoding {
			// Swift's replication policies have no such options.
			return Policy{}, fmt.Errorf("%w: invalid option %q in a %s storage-policy section", ErrInvalid, k, p.Type)
		}
	}
	num("ec_num_data_fragments", &p.EC.DataFragments)
	num("ec_num_parity_fragments", &p.EC.ParityFragments)
	num("ec_object_segment_size", &p.EC.SegmentSize)
	num("ec_duplication_factor", &p.EC.DuplicationFactor)
	if err != nil {
		return Policy{}, err
	}
	if p.Type == ErasureCoding {
		if _, ok := opts["ec_num_data_fragments"]; !ok {
			return Policy{}, fmt.Errorf("%w: missing ec_num_data_fragments", ErrInvalid)
		}
		if _, ok := opts["ec_num_parity_fragments"]; !ok {
			return Policy{}, fmt.Errorf("%w: missing ec_num_parity_fragments", ErrInvalid)
		}
	}
	return p, nil
}

// trueValue is Swift's config_true_value.
func trueValue(v string) bool {
	switch strings.ToLower(v) {
	case "true", "1", "yes", "on", "t", "y":
		return true
	}
	return false
}

// parseINI reads the sections of an INI file as Python's ConfigParser (strict=False, which
// Swift uses for swift.conf) reads them: "key = value" or "key: value", keys without case,
// values trimmed, lines starting with # or ; ignored, an indented line continuing the value
// before it, a repeated section or key merging into the first (the last value wins). It
// returns the sections' options and their names in order of first appearance.
func parseINI(text string) (map[string]map[string]string, []string) {
	sections := map[string]map[string]string{}
	var order []string
	var cur map[string]string
	lastKey := ""
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';' {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if cur != nil && lastKey != "" {
				cur[lastKey] = strings.TrimSpace(cur[lastKey] + "\n" + trimmed)
			}
			continue
		}
		if trimmed[0] == '[' && trimmed[len(trimmed)-1] == ']' {
			name := strings.TrimSpace(trimmed[1 : len(trimmed)-1])
			if sections[name] == nil {
				sections[name] = map[string]string{}
				order = append(order, name)
			}
			cur, lastKey = sections[name], ""
			continue
		}
		if cur == nil {
			continue // options before any section: Python refuses the file; nothing of ours
		}
		i := strings.IndexAny(trimmed, "=:")
		if i < 0 {
			continue
		}
		lastKey = strings.ToLower(strings.TrimSpace(trimmed[:i]))
		cur[lastKey] = strings.TrimSpace(trimmed[i+1:])
	}
	return sections, order
}
