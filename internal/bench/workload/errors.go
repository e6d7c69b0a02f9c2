package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// fieldError is a problem with one field of a workload. It is built where the problem is
// found, with the path of the field relative to what that code sees (a SizeDist knows "min",
// not which stage it belongs to), and gains the rest of its path, a file name and a line on
// its way out. Its text is always one line: "file:line: stage "main": mix: message".
type fieldError struct {
	keys  []string // YAML path of the field: mapping keys, and list indexes in decimal
	leaf  string   // one more key, used to find the line but not printed (the message names it)
	label string   // keys as a person reads them; set once the whole path is known
	msg   string

	file string
	line int // 0: unknown

	// anchorLine and anchorCol locate the YAML node that keys are relative to, set by an
	// UnmarshalYAML method; Parse finds that node's path in the document.
	anchorLine, anchorCol int
}

func (e *fieldError) Error() string {
	var b strings.Builder
	if e.file != "" {
		b.WriteString(e.file)
		if e.line > 0 {
			b.WriteString(":" + strconv.Itoa(e.line))
		}
		b.WriteString(": ")
	}
	label := e.label
	if label == "" {
		label = renderKeys(e.keys, nil)
	}
	if label != "" {
		b.WriteString(label + ": ")
	}
	b.WriteString(e.msg)
	return b.String()
}

// errAt makes an error about the field at keys.
func errAt(keys []string, format string, args ...any) *fieldError {
	return &fieldError{keys: keys, msg: oneLine(fmt.Sprintf(format, args...))}
}

// under puts e below prefix: a stage's "size" error becomes "stages", "2", "size", ….
func (e *fieldError) under(prefix ...string) *fieldError {
	e.keys = append(append([]string(nil), prefix...), e.keys...)
	return e
}

// nodeErr makes an error about node n at keys (relative to the node being unmarshaled),
// carrying n's line.
func nodeErr(n *yaml.Node, keys []string, format string, args ...any) *fieldError {
	e := errAt(keys, format, args...)
	e.line = n.Line
	return e
}

// anchorAt records, on a fieldError leaving an UnmarshalYAML method, which node its keys are
// relative to.
func anchorAt(n *yaml.Node, err *error) {
	if e, ok := (*err).(*fieldError); ok && e.anchorLine == 0 {
		e.anchorLine, e.anchorCol = n.Line, n.Column
		if e.line == 0 {
			e.line = n.Line
		}
	}
}

func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// renderKeys turns a path into what a person reads: ["stages", "1", "mix"] becomes
// `stage "main": mix`. name returns the name of the list item at a path ("" when unnamed or
// unknown); it may be nil.
func renderKeys(keys []string, name func(path []string) string) string {
	var parts []string
	for i := 0; i < len(keys); i++ {
		k := keys[i]
		if _, err := strconv.Atoi(k); err == nil {
			if len(parts) == 0 {
				parts = append(parts, "["+k+"]")
			} else {
				parts[len(parts)-1] += "[" + k + "]"
			}
			continue
		}
		if (k == "stages" || k == "events") && i+1 < len(keys) {
			if idx, err := strconv.Atoi(keys[i+1]); err == nil {
				what := strings.TrimSuffix(k, "s")
				nm := ""
				if name != nil {
					nm = name(keys[:i+2])
				}
				if nm == "" {
					nm = fmt.Sprintf("%s-%d", what, idx+1) // the name Normalize gives it
				}
				parts = append(parts, fmt.Sprintf("%s %q", what, nm))
				i++
				continue
			}
		}
		parts = append(parts, k)
	}
	return strings.Join(parts, ": ")
}

// mappingFields checks that n is a mapping with only the allowed keys, each once, and returns
// the values by key. want describes the expected form for the error text.
func mappingFields(n *yaml.Node, keys []string, want string, allowed ...string) (map[string]*yaml.Node, error) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return nil, nodeErr(n, keys, "want %s", want)
	}
	out := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		known := false
		for _, a := range allowed {
			known = known || k.Value == a
		}
		if k.Kind != yaml.ScalarNode || !known {
			e := nodeErr(k, keys, "unknown field %q (known: %s)", k.Value, strings.Join(allowed, ", "))
			e.leaf = k.Value
			return nil, e
		}
		if _, dup := out[k.Value]; dup {
			return nil, nodeErr(k, append(keys, k.Value), "given twice")
		}
		out[k.Value] = n.Content[i+1]
	}
	return out, nil
}

// sizeNode reads a size scalar: 4096, "4KiB", "1.5MiB".
func sizeNode(n *yaml.Node, keys []string) (int64, error) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode {
		return 0, nodeErr(n, keys, "want a size such as 4096, 4KiB, 1MiB or 100KB")
	}
	v, err := ParseSize(n.Value)
	if err != nil {
		return 0, nodeErr(n, keys, "%s", strings.TrimPrefix(err.Error(), "size "))
	}
	return v, nil
}

// floatNode reads a number scalar.
func floatNode(n *yaml.Node, keys []string) (float64, error) {
	n = deref(n)
	var f float64
	if n.Kind != yaml.ScalarNode || n.Decode(&f) != nil {
		return 0, nodeErr(n, keys, "want a number, got %s", describeNode(n))
	}
	return f, nil
}

// deref is the node an alias (*name) stands for. The decoder resolves the alias of a whole
// value before an UnmarshalYAML method sees it; the method resolves those within.
func deref(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	return strconv.Quote(n.Value)
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }

// flowMap is a one-line mapping {k1: v1, k2: v2}.
func flowMap(kv ...string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	for _, s := range kv {
		n.Content = append(n.Content, scalar(s))
	}
	return n
}

// nonNegative reports whether f is a finite number ≥ 0 (NaN is not).
func nonNegative(f float64) bool { return f >= 0 && !math.IsInf(f, 0) }
