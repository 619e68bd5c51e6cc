package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gameday-dev/gameday/internal/fileerr"
)

// MaxSize is the largest input file [Document.Parse] accepts, in bytes: a
// scenario, a system file and a matrix are short files.
const MaxSize = 1 << 20

// Document says what a strict input file holds, for the messages of
// [Document.Parse]: the document layer every input file shares.
type Document struct {
	// What names the file's content after "a file holds": "one scenario".
	What string
	// Want says what the top level must be, after "want": "a mapping of
	// scenario fields (name: ..., load: ...)".
	Want string
	// Empty is the message for an empty file; "" means "no YAML document:
	// the file is empty".
	Empty string
	// FieldAt names the field that line (1-based) of data seems to belong
	// to, for a syntax error, which has no node tree to name it from; nil
	// leaves syntax errors without a field.
	FieldAt func(data []byte, line int) string
}

// ParseMapping parses data as [Document.Parse] does and returns the
// document's root mapping. what names the file's content for messages
// ("one scenario"), fields its top-level fields ("scenario fields (name:
// ..., load: ...)").
func ParseMapping(file string, data []byte, what, fields string) (*yaml.Node, error) {
	doc, err := Document{What: what, Want: "a mapping of " + fields}.Parse(file, data)
	if err != nil {
		return nil, err
	}
	return doc.Content[0], nil
}

// Parse parses data into a node tree and returns the document node, whose
// one child is the root mapping (the document node keeps the comments
// around it, for a caller that writes the file again). It refuses an empty
// file, more than one document, anchors and aliases (before anything is
// expanded), a file larger than [MaxSize] and a top level that is not a
// mapping, and turns the YAML
// library's errors into *fileerr.Error values with the line.
func (d Document) Parse(file string, data []byte) (*yaml.Node, error) {
	if len(data) > MaxSize {
		return nil, &fileerr.Error{File: file, Msg: fmt.Sprintf("larger than %d bytes (1 MiB): a file holding %s is a short file", MaxSize, d.What)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := decodeNode(dec, &doc); err != nil {
		if errors.Is(err, io.EOF) {
			msg := d.Empty
			if msg == "" {
				msg = "no YAML document: the file is empty"
			}
			return nil, &fileerr.Error{File: file, Msg: msg}
		}
		return nil, d.syntaxError(file, data, err)
	}
	var extra yaml.Node
	if err := decodeNode(dec, &extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if err != nil {
			line = d.syntaxError(file, data, err).Line
		}
		return nil, &fileerr.Error{File: file, Line: line, Msg: fmt.Sprintf("more than one YAML document (\"---\"): a file holds %s", d.What)}
	}
	if err := RefuseAliases(file, &doc, ""); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &fileerr.Error{File: file, Line: doc.Line, Msg: "no YAML document"}
	}
	if root := doc.Content[0]; root.Kind != yaml.MappingNode {
		return nil, &fileerr.Error{File: file, Line: root.Line, Msg: fmt.Sprintf("want %s, got %s", d.Want, Describe(root))}
	}
	return &doc, nil
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

// syntaxError turns the YAML library's error into an *Error with its line
// and, with FieldAt, its field.
func (d Document) syntaxError(file string, data []byte, err error) *fileerr.Error {
	msg := err.Error()
	m := yamlLineRE.FindStringSubmatch(msg)
	if m == nil {
		return &fileerr.Error{File: file, Msg: "bad YAML: " + strings.TrimPrefix(msg, "yaml: ")}
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
	e := &fileerr.Error{File: file, Line: line, Msg: "bad YAML: " + msg}
	if d.FieldAt != nil {
		e.Field = ClipField(d.FieldAt(data, line))
	}
	return e
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
