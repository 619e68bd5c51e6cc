package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gameday-dev/gameday/internal/strictyaml"
)

// MaxSize is the largest scenario file Parse and LoadFile accept, in bytes.
const MaxSize = 1 << 20

// LoadFile reads, parses and validates the scenario file at path, reading at
// most [MaxSize] bytes. Problems with the content are *Error values (see
// [Parse]); a file that cannot be read gives the wrapped *fs.PathError.
func LoadFile(path string) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	return Parse(path, data)
}

// Parse reads one scenario from data, names file in its errors and in
// Scenario.File, fills in the defaults ([Scenario.SetDefaults]) and
// validates it ([Scenario.Validate]).
//
// It is strict: the input must be at most [MaxSize] bytes of one YAML
// document holding a mapping, without anchors or aliases; unknown and
// repeated keys, values of the wrong type, bare numbers where a duration
// is expected and negative durations are errors. Every error is an *Error
// naming the file, line and field, or several of them joined with
// errors.Join.
func Parse(file string, data []byte) (*Scenario, error) {
	if len(data) > MaxSize {
		return nil, &Error{File: file, Msg: fmt.Sprintf("larger than %d bytes (1 MiB); a scenario is a short file", MaxSize)}
	}
	root, err := parseNode(file, data)
	if err != nil {
		return nil, err
	}
	d := &decoder{file: file, lines: map[string]int{"": root.Line}}
	s := &Scenario{}
	d.decode(root, reflect.ValueOf(s).Elem(), "")
	if len(d.errs) > 0 {
		return nil, joinSorted(d.errs)
	}
	s.File = file
	s.lines = d.lines
	s.SetDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// parseNode parses data into a node tree and returns the document's root
// mapping, refusing more than one document, anchors and aliases.
func parseNode(file string, data []byte) (root *yaml.Node, err error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := decodeNode(dec, &doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: file, Msg: "no YAML document: the file is empty"}
		}
		return nil, syntaxError(file, data, err)
	}
	var extra yaml.Node
	if err := decodeNode(dec, &extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if err != nil {
			line = syntaxError(file, data, err).Line
		}
		return nil, &Error{File: file, Line: line, Msg: "more than one YAML document (\"---\"): a file holds one scenario"}
	}
	if err := refuseAliases(file, &doc, ""); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &Error{File: file, Line: doc.Line, Msg: "no YAML document"}
	}
	root = doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &Error{File: file, Line: root.Line, Msg: fmt.Sprintf("want a mapping of scenario fields (name: ..., load: ...), got a %s", kindName(root))}
	}
	return root, nil
}

// decodeNode decodes the next document into n. The YAML library reports
// problems by panicking internally and recovering; should a panic of
// another kind escape it, it becomes an error here, so that bad input
// never crashes the caller.
func decodeNode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: internal error reading the document: %v", r)
		}
	}()
	return dec.Decode(n)
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError turns the YAML library's error into an *Error with its line.
func syntaxError(file string, data []byte, err error) *Error {
	msg := err.Error()
	m := yamlLineRE.FindStringSubmatch(msg)
	if m == nil {
		return &Error{File: file, Msg: "bad YAML: " + strings.TrimPrefix(msg, "yaml: ")}
	}
	line, _ := strconv.Atoi(m[1])
	msg = m[2]
	if strings.Contains(msg, "tab character") {
		// The library names the line where the enclosing block started;
		// point at the tab itself.
		if l := firstTabIndent(data, line); l > 0 {
			line = l
		}
		msg += " (indent with spaces)"
	}
	return &Error{File: file, Line: line, Msg: "bad YAML: " + msg}
}

// firstTabIndent returns the first line, from line from on, whose
// indentation holds a tab; 0 if none.
func firstTabIndent(data []byte, from int) int {
	for i, l := range bytes.Split(data, []byte("\n")) {
		if i+1 < from {
			continue
		}
		indent := l[:len(l)-len(bytes.TrimLeft(l, " \t"))]
		if bytes.IndexByte(indent, '\t') >= 0 {
			return i + 1
		}
	}
	return 0
}

// refuseAliases reports the first anchor or alias in the tree.
func refuseAliases(file string, n *yaml.Node, path string) error {
	return strictyaml.RefuseAliases(file, n, path)
}

func joinPath(path, key string) string { return strictyaml.JoinPath(path, key) }

// kindName says what a node is, for errors.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	case yaml.DocumentNode:
		return "document"
	}
	switch n.ShortTag() {
	case "!!str":
		return "string"
	case "!!int", "!!float":
		return "number"
	case "!!bool":
		return "boolean"
	case "!!null":
		return "null"
	}
	return "value tagged " + n.ShortTag()
}

// decoder fills a value from a node tree strictly, walking the struct's
// yaml tags, and records the line of every field path it fills.
type decoder struct {
	file  string
	lines map[string]int
	errs  []*Error
}

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: n.Line, Field: clipField(path), Msg: fmt.Sprintf(format, args...)})
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// decode fills v from n. A null node leaves v as it is (its zero value).
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return
	}
	if v.Kind() != reflect.Pointer && reflect.PointerTo(v.Type()).Implements(unmarshalerType) {
		if err := v.Addr().Interface().(yaml.Unmarshaler).UnmarshalYAML(n); err != nil {
			d.fail(n, path, "%s", err.Error())
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		d.decode(n, p.Elem(), path)
		v.Set(p)
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.fail(n, path, "want a list, got a %s", kindName(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			p := path + "[" + strconv.Itoa(i) + "]"
			d.lines[p] = c.Line
			d.decode(c, s.Index(i), p)
		}
		v.Set(s)
	case reflect.Map:
		d.decodeMap(n, v, path)
	case reflect.Interface:
		d.decodeAny(n, v, path)
	case reflect.String:
		if !d.scalar(n, path, "a string", "!!str") {
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		if !d.scalar(n, path, "true or false", "!!bool") {
			return
		}
		var b bool
		if err := n.Decode(&b); err != nil {
			d.fail(n, path, "want true or false, got %s", short(n.Value))
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !d.wholeNumber(n, path) {
			return
		}
		var i int64
		if err := n.Decode(&i); err != nil || v.OverflowInt(i) {
			d.fail(n, path, "%s is out of range", short(n.Value))
			return
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if !d.wholeNumber(n, path) {
			return
		}
		var i int64
		if err := n.Decode(&i); err == nil && i < 0 {
			d.fail(n, path, "%s is negative", short(n.Value))
			return
		}
		var u uint64
		if err := n.Decode(&u); err != nil || v.OverflowUint(u) {
			d.fail(n, path, "%s is out of range", short(n.Value))
			return
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		if !d.scalar(n, path, "a number", "!!float", "!!int") {
			return
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			d.fail(n, path, "%s is not a number", short(n.Value))
			return
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			d.fail(n, path, "want a finite number, got %s", short(n.Value))
			return
		}
		v.SetFloat(f)
	default:
		// Only reachable if a field of an unsupported kind is added to
		// the scenario types; TestDecoderCoversEveryField guards it.
		d.fail(n, path, "cannot read a value into a Go %s", v.Type())
	}
}

// scalar reports whether n is a scalar with one of tags, recording an error
// saying what was wanted when it is not.
func (d *decoder) scalar(n *yaml.Node, path, want string, tags ...string) bool {
	if n.Kind == yaml.ScalarNode && slices.Contains(tags, n.ShortTag()) {
		return true
	}
	if n.Kind == yaml.ScalarNode {
		d.fail(n, path, "want %s, got %s %s", want, kindName(n), clip(n.Value))
	} else {
		d.fail(n, path, "want %s, got a %s", want, kindName(n))
	}
	return false
}

// wholeNumber reports whether n is an integer scalar, recording an error
// that tells a fraction from a number too large to be read as an integer.
func (d *decoder) wholeNumber(n *yaml.Node, path string) bool {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
		var f float64
		if err := n.Decode(&f); err == nil && f == math.Trunc(f) && math.Abs(f) >= 1<<63 {
			d.fail(n, path, "%s is out of range", short(n.Value))
		} else {
			d.fail(n, path, "want a whole number, got %s", short(n.Value))
		}
		return false
	}
	return d.scalar(n, path, "a whole number", "!!int")
}

// mappingKeys checks that n is a mapping with string keys, each given once,
// and calls fn for each pair.
func (d *decoder) mappingKeys(n *yaml.Node, path string, fn func(key string, k, val *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "want a mapping, got a %s", kindName(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			d.fail(k, path, "merge keys (<<) are not allowed: write the fields out")
			continue
		}
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			d.fail(k, path, "keys must be plain names, got a %s", kindName(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.fail(k, joinPath(path, k.Value), "given twice (first on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		fn(k.Value, k, val)
	}
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	fields := structFields(v.Type())
	d.mappingKeys(n, path, func(key string, k, val *yaml.Node) {
		p := joinPath(path, key)
		i, ok := fields[key]
		if !ok {
			d.fail(k, p, "unknown field (known: %s)", strings.Join(sortedKeys(fields), ", "))
			return
		}
		d.lines[p] = k.Line
		d.decode(val, v.Field(i), p)
	})
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if v.Type().Key().Kind() != reflect.String {
		d.fail(n, path, "cannot read a map keyed by %s", v.Type().Key())
		return
	}
	m := reflect.MakeMap(v.Type())
	d.mappingKeys(n, path, func(key string, k, val *yaml.Node) {
		p := joinPath(path, key)
		d.lines[p] = k.Line
		e := reflect.New(v.Type().Elem()).Elem()
		errs := len(d.errs)
		d.decode(val, e, p)
		if len(d.errs) == errs {
			m.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), e)
		}
	})
	v.Set(m)
}

// decodeAny reads a scalar for a field of type any (toxic attributes): a
// whole number as int64, another number as float64, a string as string.
func (d *decoder) decodeAny(n *yaml.Node, v reflect.Value, path string) {
	if !d.scalar(n, path, "a number or a duration string", "!!int", "!!float", "!!str") {
		return
	}
	var x any
	switch n.ShortTag() {
	case "!!str":
		x = n.Value
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			d.fail(n, path, "%s is out of range", short(n.Value))
			return
		}
		x = i
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			d.fail(n, path, "want a finite number, got %s", short(n.Value))
			return
		}
		x = f
	}
	v.Set(reflect.ValueOf(x))
}

// structFields maps a struct's yaml names to field indexes, leaving out
// fields tagged "-" and unexported ones.
func structFields(t reflect.Type) map[string]int {
	out := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = i
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
