package workload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Load reads a workload file, decodes it strictly and normalizes it.
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading workload: %w", err)
	}
	return Parse(path, data)
}

// Resolve is a built-in workload by name, else the workload file at nameOrPath. A built-in
// name wins over a file of the same name in the current directory (write ./A for the file).
func Resolve(nameOrPath string) (*Spec, error) {
	if s, ok := Builtin(nameOrPath); ok {
		return s, nil
	}
	if _, err := os.Stat(nameOrPath); err != nil {
		return nil, fmt.Errorf("workload %q is neither a built-in (%s) nor a file: %w",
			nameOrPath, strings.Join(BuiltinNames(), ", "), err)
	}
	return Load(nameOrPath)
}

// Parse decodes the workload in data strictly (an unknown field is an error, not ignored) and
// normalizes it. name is the file name errors begin with; the workload's Name defaults to it
// without directory and extension. Every error is one line: "name:line: field: problem".
func Parse(name string, data []byte) (*Spec, error) {
	// The document is parsed twice: into a node tree, which only serves to find the line and
	// path of a problem, and into the Spec by a Decoder that rejects unknown fields.
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, syntaxError(name, err)
	}
	if len(root.Content) == 0 {
		return nil, &fieldError{file: name, msg: "empty workload file"}
	}
	s := &Spec{Size: ConstantSize(DefaultSize)}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(s); err != nil {
		return nil, decodeError(name, &root, err)
	}
	if fe := checkWholeNumbers(&root, reflect.TypeFor[Spec](), nil, 0); fe != nil {
		fe.file, fe.label = name, renderKeys(fe.keys, treeNames(&root))
		return nil, fe
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		return nil, &fieldError{file: name, line: next.Line, msg: "a second YAML document (after ---); a workload file holds one"}
	case !errors.Is(err, io.EOF):
		return nil, syntaxError(name, err)
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	if err := s.Normalize(); err != nil {
		var fe *fieldError
		if errors.As(err, &fe) {
			fe.file = name
			keys := append([]string(nil), fe.keys...)
			if fe.leaf != "" {
				keys = append(keys, fe.leaf)
			}
			fe.line = lineOf(&root, keys)
		}
		return nil, err
	}
	return s, nil
}

// YAML is the Spec as a workload file that Parse reads back to the same stages: `cairn bench
// workloads` prints the built-ins this way, for a user to start a file of their own from.
func (s *Spec) YAML() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("workload %q: encoding YAML: %w", s.Name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("workload %q: encoding YAML: %w", s.Name, err)
	}
	return b.Bytes(), nil
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// checkWholeNumbers rejects a fraction where the workload wants a whole number: the yaml
// decoder would truncate "concurrency: 0.5" to 0 (and so to the default) without a word. It
// walks the document alongside the Go type t it was decoded into.
func checkWholeNumbers(n *yaml.Node, t reflect.Type, path []string, depth int) *fieldError {
	if depth > 100 {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // it parses its own node
	}
	switch {
	case n.Kind == yaml.DocumentNode:
		for _, c := range n.Content {
			if fe := checkWholeNumbers(c, t, path, depth+1); fe != nil {
				return fe
			}
		}
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" { // a merge: its mappings fill the same struct
				if v.Kind == yaml.SequenceNode {
					for _, m := range v.Content {
						if fe := checkWholeNumbers(m, t, path, depth+1); fe != nil {
							return fe
						}
					}
				} else if fe := checkWholeNumbers(v, t, path, depth+1); fe != nil {
					return fe
				}
				continue
			}
			for j := range t.NumField() {
				if tag, _, _ := strings.Cut(t.Field(j).Tag.Get("yaml"), ","); tag == k.Value {
					p := append(append([]string(nil), path...), k.Value)
					if fe := checkWholeNumbers(v, t.Field(j).Type, p, depth+1); fe != nil {
						return fe
					}
				}
			}
		}
	case n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice:
		for i, c := range n.Content {
			p := append(append([]string(nil), path...), strconv.Itoa(i))
			if fe := checkWholeNumbers(c, t.Elem(), p, depth+1); fe != nil {
				return fe
			}
		}
	case n.Kind == yaml.ScalarNode && (t.Kind() == reflect.Int || t.Kind() == reflect.Int64):
		if tag := n.ShortTag(); tag != "!!int" && tag != "!!null" { // null: the default
			return nodeErr(n, path, "want a whole number, got %s", describeNode(n))
		}
	}
	return nil
}

var syntaxLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// syntaxError makes a YAML parse error one line with the file name.
func syntaxError(name string, err error) error {
	msg := oneLine(strings.TrimPrefix(err.Error(), "yaml: "))
	e := &fieldError{file: name, msg: "not valid YAML: " + msg}
	if m := syntaxLine.FindStringSubmatch(msg); m != nil {
		e.line, _ = strconv.Atoi(m[1])
		e.msg = "not valid YAML: " + m[2]
	}
	return e
}

// decodeError turns an error of the strict decode into a fieldError with path and line.
func decodeError(name string, root *yaml.Node, err error) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		// From an UnmarshalYAML method: its keys are relative to the node it was given.
		if fe.anchorLine > 0 {
			walk(root, nil, func(path []string, _, v *yaml.Node) bool {
				if v.Line == fe.anchorLine && v.Column == fe.anchorCol {
					fe.under(path...)
					return true
				}
				return false
			})
		}
		fe.file = name
		fe.label = renderKeys(fe.keys, treeNames(root))
		return fe
	}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		fe := typeError(root, te.Errors[0])
		if n := len(te.Errors) - 1; n > 0 {
			fe.msg += fmt.Sprintf(" (and %d more problem%s)", n, map[bool]string{true: "s"}[n > 1])
		}
		fe.file = name
		fe.label = renderKeys(fe.keys, treeNames(root))
		return fe
	}
	return syntaxError(name, err)
}

var (
	reLine     = regexp.MustCompile(`^line (\d+): (.*)$`)
	reUnknown  = regexp.MustCompile(`^field (.*) not found in type (\S+)$`)
	reSetTwice = regexp.MustCompile(`^field (.*) already set in type (\S+)$`)
	reDupKey   = regexp.MustCompile(`^mapping key (".*") already defined at line (\d+)$`)
	reType     = regexp.MustCompile("^cannot unmarshal (\\S+?)(?: `(.*)`)? into (.+)$")
)

// typeError rewrites one of yaml's TypeError lines ("line 7: field sise not found in type
// workload.Spec") with the path of the field it is about.
func typeError(root *yaml.Node, text string) *fieldError {
	m := reLine.FindStringSubmatch(text)
	if m == nil {
		return &fieldError{msg: oneLine(text)}
	}
	line, _ := strconv.Atoi(m[1])
	msg := m[2]
	fe := &fieldError{line: line, msg: oneLine(msg)}
	// keyAt finds the mapping entry whose key is k on the line.
	keyAt := func(k string) []string {
		var found []string
		walk(root, nil, func(path []string, key, _ *yaml.Node) bool {
			if key != nil && key.Line == line && key.Value == k {
				found = path
				return true
			}
			return false
		})
		return found
	}
	switch {
	case reUnknown.MatchString(msg):
		sm := reUnknown.FindStringSubmatch(msg)
		fe.msg = fmt.Sprintf("unknown field %q", sm[1])
		if known := fieldNames(sm[2]); known != "" {
			fe.msg += " (known: " + known + ")"
		}
		if p := keyAt(sm[1]); p != nil {
			fe.keys, fe.leaf = p[:len(p)-1], sm[1]
		}
	case reSetTwice.MatchString(msg):
		sm := reSetTwice.FindStringSubmatch(msg)
		fe.msg = "given twice"
		fe.keys = keyAt(sm[1])
	case reDupKey.MatchString(msg):
		sm := reDupKey.FindStringSubmatch(msg)
		k, err := strconv.Unquote(sm[1])
		if err != nil {
			k = sm[1]
		}
		fe.msg = "given twice (first at line " + sm[2] + ")"
		fe.keys = keyAt(k)
	case reType.MatchString(msg):
		sm := reType.FindStringSubmatch(msg)
		value, into := sm[2], sm[3]
		prefix := strings.TrimSuffix(value, "...")
		// The node is the one on the line with that value whose place in the document wants
		// that Go type: several nodes can share a line ("stages: [[]]").
		matches := func(path []string, v *yaml.Node) bool {
			if v.Line != line {
				return false
			}
			if t := typeAt(path); t == nil || strings.TrimPrefix(t.String(), "*") != strings.TrimPrefix(into, "*") {
				return false
			}
			return sm[2] == "" && (v.Kind == yaml.MappingNode || v.Kind == yaml.SequenceNode) ||
				sm[2] != "" && v.Kind == yaml.ScalarNode && strings.HasPrefix(v.Value, prefix)
		}
		if len(root.Content) > 0 && matches(nil, root.Content[0]) {
			value = describeNode(root.Content[0])
		} else {
			walk(root, nil, func(path []string, _, v *yaml.Node) bool {
				if matches(path, v) {
					fe.keys = path
					value = describeNode(v)
					return true
				}
				return false
			})
		}
		if value == "" {
			value = map[string]string{"!!map": "a mapping", "!!seq": "a list"}[sm[1]]
		}
		fe.msg = "want " + describeType(into) + ", got " + value
	}
	return fe
}

// decodedTypes are the struct types the yaml decoder fills itself, by the name its errors use.
var decodedTypes = map[string]reflect.Type{
	reflect.TypeFor[Spec]().String():  reflect.TypeFor[Spec](),
	reflect.TypeFor[Stage]().String(): reflect.TypeFor[Stage](),
	reflect.TypeFor[Ramp]().String():  reflect.TypeFor[Ramp](),
	reflect.TypeFor[Event]().String(): reflect.TypeFor[Event](),
}

// typeAt is the Go type that the value at path in a workload document decodes into, or nil
// where the path leads nowhere in a Spec.
func typeAt(path []string) reflect.Type {
	t := reflect.TypeFor[Spec]()
	for _, k := range path {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			var next reflect.Type
			for i := range t.NumField() {
				if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag == k {
					next = t.Field(i).Type
				}
			}
			if next == nil {
				return nil
			}
			t = next
		case reflect.Slice:
			if _, err := strconv.Atoi(k); err != nil {
				return nil
			}
			t = t.Elem()
		default:
			return nil
		}
	}
	return t
}

// fieldNames lists the YAML fields of a decoded struct type, for "unknown field" errors.
func fieldNames(typeName string) string {
	t, ok := decodedTypes[typeName]
	if !ok {
		return ""
	}
	var names []string
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if tag != "" && tag != "-" {
			names = append(names, tag)
		}
	}
	return strings.Join(names, ", ")
}

// describeType says in words what a Go type wants from YAML.
func describeType(goType string) string {
	switch strings.TrimPrefix(goType, "*") {
	case "int", "int64":
		return "a whole number"
	case "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "string", "workload.StageKind":
		return "a string"
	case "[]workload.Stage":
		return "a list of stages"
	case "[]workload.Event":
		return "a list of events"
	case "workload.Spec":
		return "a mapping of workload fields (name, size, mix, …)"
	case "workload.Stage", "workload.Ramp", "workload.Event":
		return "a mapping"
	}
	return goType
}

// walk calls fn for every mapping entry (key set) and list item (key nil) under n, in document
// order, with its path; it stops when fn returns true, and reports whether it did. Aliases are
// not followed: their target is visited where it is defined.
func walk(n *yaml.Node, path []string, fn func(path []string, key, val *yaml.Node) bool) bool {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if walk(c, path, fn) {
				return true
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := append(append([]string(nil), path...), k.Value)
			if fn(p, k, v) || walk(v, p, fn) {
				return true
			}
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			p := append(append([]string(nil), path...), strconv.Itoa(i))
			if fn(p, nil, v) || walk(v, p, fn) {
				return true
			}
		}
	}
	return false
}

// descend follows keys from n as far as they lead, and returns the last node reached, the
// line of its key (or list item), and how many keys it followed. Mapping keys match
// case-insensitively, as mix operations do.
func descend(n *yaml.Node, keys []string) (*yaml.Node, int, int) {
	line := 0
	for n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for depth, k := range keys {
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if strings.EqualFold(n.Content[i].Value, k) {
					next, line = n.Content[i+1], n.Content[i].Line
					break
				}
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(k); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
				line = next.Line
			}
		}
		if next == nil {
			return n, line, depth
		}
		n = next
	}
	return n, line, len(keys)
}

// lineOf is the line of the deepest node on keys that the document has (0: none).
func lineOf(root *yaml.Node, keys []string) int {
	_, line, _ := descend(root, keys)
	return line
}

// treeNames names stages and events for error labels from the document itself, for errors
// found before there is a Spec to ask.
func treeNames(root *yaml.Node) func(path []string) string {
	return func(path []string) string {
		n, _, depth := descend(root, path)
		if depth < len(path) {
			return ""
		}
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		if n.Kind != yaml.MappingNode {
			return ""
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "name" && n.Content[i+1].Kind == yaml.ScalarNode {
				return n.Content[i+1].Value
			}
		}
		return ""
	}
}
