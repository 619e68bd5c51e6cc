package strictyaml

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gameday-dev/gameday/internal/fileerr"
)

// UnmarshalerType is yaml.Unmarshaler: a type that implements it decodes
// itself (a duration from "250ms", say), and is trusted to be as strict.
var UnmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// Decoder fills Go values from a node tree strictly, walking the structs'
// yaml tags: unknown and repeated keys, values of the wrong type, merge
// keys and non-string keys are errors, each located by line and field
// path. It records the line of every field path it fills, so that a
// validator can name it. Anonymous struct fields without a yaml name are
// flattened into their parent, as encoding/json does.
type Decoder struct {
	File  string
	Lines map[string]int
	Errs  []*fileerr.Error
	// AnyBools lets a field of type any hold a boolean; without it only
	// numbers and strings are read into one.
	AnyBools bool
	// Substituted are scalars whose text a variable gave: a string field
	// takes their text whatever it looks like (sku: ${SKU} with SKU=123), a
	// number or boolean field reads it for what it says, quoted or not
	// (expect: "${CODE}" with CODE=201).
	Substituted map[*yaml.Node]bool
}

// NewDecoder returns a decoder for file.
func NewDecoder(file string) *Decoder { return &Decoder{File: file, Lines: map[string]int{}} }

// Fail records an error at node n.
func (d *Decoder) Fail(n *yaml.Node, path, format string, args ...any) {
	d.Errs = append(d.Errs, &fileerr.Error{File: d.File, Line: n.Line, Field: ClipField(path), Msg: fmt.Sprintf(format, args...)})
}

// Err returns the errors recorded, joined in line order, or nil.
func (d *Decoder) Err() error { return fileerr.Join(d.Errs) }

// Decode fills v from n. A null node leaves v as it is (its zero value).
func (d *Decoder) Decode(n *yaml.Node, v reflect.Value, path string) {
	if IsNull(n) {
		return
	}
	if v.Kind() != reflect.Pointer && reflect.PointerTo(v.Type()).Implements(UnmarshalerType) {
		if err := v.Addr().Interface().(yaml.Unmarshaler).UnmarshalYAML(n); err != nil {
			d.Fail(n, path, "%s", err.Error())
		}
		return
	}
	if n.Kind == yaml.ScalarNode && d.Substituted[n] {
		switch v.Kind() {
		case reflect.String:
			v.SetString(n.Value)
			return
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64, reflect.Bool:
			c := *n // read for what it says, quoted or not
			c.Style, c.Tag = 0, ""
			n = &c
		}
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		d.Decode(n, p.Elem(), path)
		v.Set(p)
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.Fail(n, path, "want a list, got %s", Describe(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			p := path + "[" + strconv.Itoa(i) + "]"
			d.Lines[p] = c.Line
			d.Decode(c, s.Index(i), p)
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
			d.Fail(n, path, "want true or false, got %s", Clip(n.Value))
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !d.wholeNumber(n, path) {
			return
		}
		var i int64
		if err := n.Decode(&i); err != nil || v.OverflowInt(i) {
			d.Fail(n, path, "%s is out of range", Clip(n.Value))
			return
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if !d.wholeNumber(n, path) {
			return
		}
		var i int64
		if err := n.Decode(&i); err == nil && i < 0 {
			d.Fail(n, path, "%s is negative", Clip(n.Value))
			return
		}
		var u uint64
		if err := n.Decode(&u); err != nil || v.OverflowUint(u) {
			d.Fail(n, path, "%s is out of range", Clip(n.Value))
			return
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		if !d.scalar(n, path, "a number", "!!float", "!!int") {
			return
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			d.Fail(n, path, "%s is not a number", Clip(n.Value))
			return
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			d.Fail(n, path, "want a finite number, got %s", Clip(n.Value))
			return
		}
		v.SetFloat(f)
	default:
		// Only reachable if a field of an unsupported kind is added to a
		// decoded type; each user's tests walk its types to guard it.
		d.Fail(n, path, "cannot read a value into a Go %s", v.Type())
	}
}

// scalar reports whether n is a scalar with one of tags, recording an error
// saying what was wanted when it is not.
func (d *Decoder) scalar(n *yaml.Node, path, want string, tags ...string) bool {
	if n.Kind == yaml.ScalarNode && slices.Contains(tags, n.ShortTag()) {
		return true
	}
	d.Fail(n, path, "want %s, got %s", want, Describe(n))
	return false
}

// wholeNumber reports whether n is an integer scalar, recording an error
// that tells a fraction from a number too large to be read as an integer.
func (d *Decoder) wholeNumber(n *yaml.Node, path string) bool {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
		var f float64
		if err := n.Decode(&f); err == nil && f == math.Trunc(f) && math.Abs(f) >= 1<<63 {
			d.Fail(n, path, "%s is out of range", Clip(n.Value))
		} else {
			d.Fail(n, path, "want a whole number, got %s", Clip(n.Value))
		}
		return false
	}
	return d.scalar(n, path, "a whole number", "!!int")
}

// MappingKeys checks that n is a mapping with string keys, each given once,
// and calls fn for each pair.
func (d *Decoder) MappingKeys(n *yaml.Node, path string, fn func(key string, k, val *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.Fail(n, path, "want a mapping, got %s", Describe(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			d.Fail(k, path, "merge keys (<<) are not allowed: write the fields out")
			continue
		}
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			d.Fail(k, path, "keys must be plain names, got a %s", KindName(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.Fail(k, JoinPath(path, k.Value), "given twice (first on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		fn(k.Value, k, val)
	}
}

func (d *Decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	fields := StructFields(v.Type())
	d.MappingKeys(n, path, func(key string, k, val *yaml.Node) {
		p := JoinPath(path, key)
		idx, ok := fields[key]
		if !ok {
			d.Fail(k, p, "unknown field (known: %s)", strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
			return
		}
		d.Lines[p] = k.Line
		d.Decode(val, fieldByIndex(v, idx), p)
	})
}

// fieldByIndex is v.FieldByIndex, allocating embedded pointers on the way.
func fieldByIndex(v reflect.Value, idx []int) reflect.Value {
	for i, x := range idx {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

func (d *Decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if v.Type().Key().Kind() != reflect.String {
		d.Fail(n, path, "cannot read a map keyed by %s", v.Type().Key())
		return
	}
	m := reflect.MakeMap(v.Type())
	d.MappingKeys(n, path, func(key string, k, val *yaml.Node) {
		p := JoinPath(path, key)
		d.Lines[p] = k.Line
		e := reflect.New(v.Type().Elem()).Elem()
		errs := len(d.Errs)
		d.Decode(val, e, p)
		if len(d.Errs) == errs {
			m.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), e)
		}
	})
	v.Set(m)
}

// decodeAny reads a scalar for a field of type any: a whole number as
// int64, another number as float64, a string as string, and with AnyBools
// a boolean as bool.
func (d *Decoder) decodeAny(n *yaml.Node, v reflect.Value, path string) {
	if d.AnyBools {
		if !d.scalar(n, path, "a number, a boolean or a string", "!!int", "!!float", "!!str", "!!bool") {
			return
		}
	} else if !d.scalar(n, path, "a number or a duration string", "!!int", "!!float", "!!str") {
		return
	}
	var x any
	switch n.ShortTag() {
	case "!!str":
		x = n.Value
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			d.Fail(n, path, "want true or false, got %s", Clip(n.Value))
			return
		}
		x = b
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			d.Fail(n, path, "%s is out of range", Clip(n.Value))
			return
		}
		x = i
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			d.Fail(n, path, "want a finite number, got %s", Clip(n.Value))
			return
		}
		x = f
	}
	v.Set(reflect.ValueOf(x))
}

// StructFields maps a struct's yaml names to field index paths, leaving
// out fields tagged "-" and unexported ones, and flattening anonymous
// struct fields that have no yaml name.
func StructFields(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for n, idx := range StructFields(ft) {
					if _, taken := out[n]; !taken {
						out[n] = append([]int{i}, idx...)
					}
				}
				continue
			}
		}
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = []int{i}
	}
	return out
}
