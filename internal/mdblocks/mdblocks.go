// Package mdblocks reads the fenced code blocks of a Markdown page, each
// with the marker comment on the line before it, so that tests can check
// the examples in the docs against the code that reads them.
package mdblocks

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// A Block is one fenced code block of a page.
type Block struct {
	Page string
	Line int    // of the opening fence, from 1
	Lang string // the fence's info string: yaml, sh, ...
	// Mark is what the marker on the line before the fence says, "" when
	// there is none: <!-- check: MARK -->.
	Mark string
	// Text is the block's content, the fence's indentation taken off each
	// line.
	Text string
}

var marker = regexp.MustCompile(`^<!-- check: ([a-z ]+) -->$`)

// ReadLang reads the fenced blocks of the Markdown page at path whose
// info string is lang (yaml, sh, ...).
func ReadLang(path, lang string) ([]Block, error) {
	all, err := Read(path)
	if err != nil {
		return nil, err
	}
	var out []Block
	for _, b := range all {
		if b.Lang == lang {
			out = append(out, b)
		}
	}
	return out, nil
}

// Read reads every fenced block of the Markdown page at path.
func Read(path string) ([]Block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var (
		out    []Block
		prev   string
		in     *Block
		indent string
		body   strings.Builder
		sc     = bufio.NewScanner(bytes.NewReader(data))
		n      int
	)
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case in == nil && strings.HasPrefix(trimmed, "```"):
			in = &Block{Page: path, Line: n, Lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))}
			indent = line[:len(line)-len(trimmed)]
			if m := marker.FindStringSubmatch(strings.TrimSpace(prev)); m != nil {
				in.Mark = m[1]
			}
			body.Reset()
		case in != nil && trimmed == "```":
			in.Text = body.String()
			out = append(out, *in)
			in = nil
		case in != nil:
			body.WriteString(strings.TrimPrefix(line, indent) + "\n")
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if in != nil {
		return nil, fmt.Errorf("%s:%d: a code block that is never closed", path, in.Line)
	}
	return out, nil
}
