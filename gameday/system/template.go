package system

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"text/template/parse"
	"time"
	"unicode/utf8"
)

// Values are what the runner puts into templates. A step's templates see
// a shopper's values; setup and books templates see SKU, Stock and Run.
type Values struct {
	CheckoutID string // the purchase's id, the same for every request of it
	Shopper    string // the shopper's id
	Number     int    // the shopper's number in the plan, from 0
	Session    string // the shopper's session token; "" for a guest
	Step       string // the step's name
	Attempt    int    // the attempt of this step, from 1
	Deadline   time.Time
	Kept       []string // by the index compile gave each kept name
	SKU        string   // the SKU on sale: the shop's, in a sale across shops (ShopSKU)
	Shop       string   // the shop, in a sale across shops; "" otherwise
	Stock      int64
	Run        string // the run's id prefix: every checkout id starts with it
}

// The fields a template may name, and what each renders.
type field uint8

const (
	fCheckoutID field = iota + 1
	fIdempotencyKey
	fShopper
	fShopperNumber
	fSession
	fStep
	fAttempt
	fDeadline
	fDeadlineUnixMS
	fSKU
	fStock
	fRun
	fShop
	fKept
)

var fieldNames = map[string]field{
	"CheckoutID": fCheckoutID, "IdempotencyKey": fIdempotencyKey, "Shopper": fShopper,
	"ShopperNumber": fShopperNumber, "Session": fSession, "Step": fStep, "Attempt": fAttempt,
	"Deadline": fDeadline, "DeadlineUnixMS": fDeadlineUnixMS, "SKU": fSKU, "Stock": fStock, "Run": fRun,
	"Shop": fShop,
}

// shopperFields are the fields only a purchase step can use.
var shopperFields = map[field]bool{
	fCheckoutID: true, fIdempotencyKey: true, fShopper: true, fShopperNumber: true, fSession: true,
	fStep: true, fAttempt: true, fDeadline: true, fDeadlineUnixMS: true, fKept: true,
}

// escape is how a value is written.
type escape uint8

const (
	escRaw   escape = iota // as it is
	escJSON                // a JSON string, quotes included
	escQuery               // URL query escaping
)

// tmpl is a template compiled to text and fields: rendering appends
// without reflection, into the caller's buffer.
type tmpl struct {
	src   string
	parts []tpart
}

// partsOrNone is t's parts; none for a nil template (one that did not
// compile, or a body not given).
func (t *tmpl) partsOrNone() []tpart {
	if t == nil {
		return nil
	}
	return t.parts
}

type tpart struct {
	text string
	f    field
	kept int // for fKept: the index in Values.Kept
	esc  escape
}

// scope is what a template may refer to when it is compiled.
type scope struct {
	shopper bool           // a purchase step's template
	kept    map[string]int // kept names known here, with their index
}

// compileTemplate parses src with Go's text/template syntax and accepts
// only text and actions that print one field, optionally through json or
// urlquery: {{.CheckoutID}}, {{json .Shopper}}, {{urlquery .Kept.token}}.
// That is all a request needs, and it renders without reflection on the
// hot path.
func compileTemplate(src string, sc scope) (*tmpl, error) {
	t := &tmpl{src: src}
	if !strings.Contains(src, "{{") {
		if src != "" {
			t.parts = []tpart{{text: src}}
		}
		return t, nil
	}
	trees, err := parse.Parse("t", src, "{{", "}}", map[string]any{"json": true, "urlquery": true})
	if err != nil {
		return nil, fmt.Errorf("template: %s", strings.TrimPrefix(err.Error(), "template: t:"))
	}
	root := trees["t"].Root
	for _, n := range root.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			t.parts = append(t.parts, tpart{text: string(n.Text)})
		case *parse.ActionNode:
			p, err := compileAction(n, sc)
			if err != nil {
				return nil, err
			}
			t.parts = append(t.parts, p)
		case *parse.CommentNode:
		default:
			return nil, fmt.Errorf("template: %s: only {{.Field}}, {{json .Field}} and {{urlquery .Field}} are allowed", clipText(n.String()))
		}
	}
	return t, nil
}

func compileAction(n *parse.ActionNode, sc scope) (tpart, error) {
	bad := func() (tpart, error) {
		return tpart{}, fmt.Errorf("template: %s: want {{.Field}}, {{json .Field}} or {{urlquery .Field}}", clipText(n.String()))
	}
	if n.Pipe == nil || len(n.Pipe.Decl) > 0 || len(n.Pipe.Cmds) != 1 {
		return bad()
	}
	args := n.Pipe.Cmds[0].Args
	p := tpart{}
	switch len(args) {
	case 1:
	case 2:
		id, ok := args[0].(*parse.IdentifierNode)
		if !ok {
			return bad()
		}
		switch id.Ident {
		case "json":
			p.esc = escJSON
		case "urlquery":
			p.esc = escQuery
		default:
			return bad()
		}
		args = args[1:]
	default:
		return bad()
	}
	fn, ok := args[0].(*parse.FieldNode)
	if !ok {
		return bad()
	}
	switch {
	case len(fn.Ident) == 2 && fn.Ident[0] == "Kept":
		if !sc.shopper {
			return tpart{}, fmt.Errorf("template: {{.Kept.%s}}: kept values exist only in a purchase's steps", fn.Ident[1])
		}
		i, ok := sc.kept[fn.Ident[1]]
		if !ok {
			return tpart{}, fmt.Errorf("template: {{.Kept.%s}}: no step so far keeps %q (keep: %s)", fn.Ident[1], fn.Ident[1], keptNames(sc.kept))
		}
		p.f, p.kept = fKept, i
	case len(fn.Ident) == 1:
		f, ok := fieldNames[fn.Ident[0]]
		if !ok {
			return tpart{}, fmt.Errorf("template: .%s: no such value (known: %s)", fn.Ident[0], knownFields(sc))
		}
		if shopperFields[f] && !sc.shopper {
			return tpart{}, fmt.Errorf("template: .%s: only a purchase step has it (here: .SKU, .Shop, .Stock, .Run)", fn.Ident[0])
		}
		if f == fStock && sc.shopper {
			return tpart{}, fmt.Errorf("template: .Stock: setup and books only (a purchase step has %s)", knownFields(sc))
		}
		p.f = f
	default:
		return bad()
	}
	return p, nil
}

func keptNames(kept map[string]int) string {
	if len(kept) == 0 {
		return "none"
	}
	names := make([]string, 0, len(kept))
	for n := range kept {
		names = append(names, n)
	}
	return strings.Join(sortStrings(names), ", ")
}

func knownFields(sc scope) string {
	var names []string
	for n, f := range fieldNames {
		if (sc.shopper && f != fStock) || (!sc.shopper && !shopperFields[f]) {
			names = append(names, "."+n)
		}
	}
	if sc.shopper {
		names = append(names, ".Kept.NAME")
	}
	return strings.Join(sortStrings(names), ", ")
}

func clipText(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// render appends the template rendered with v to b.
func (t *tmpl) render(b []byte, v *Values) []byte {
	for i := range t.parts {
		p := &t.parts[i]
		if p.f == 0 {
			b = append(b, p.text...)
			continue
		}
		switch p.esc {
		case escRaw:
			b = appendField(b, p, v)
		case escJSON:
			// Numbers and times are written as JSON strings too: {{json
			// .X}} is a quoted value. Only strings can need escaping: the
			// runner's ids, numbers and times are plain characters.
			if s, ok := stringField(p, v); ok {
				b = appendJSONString(b, s)
			} else {
				b = append(b, '"')
				b = appendField(b, p, v)
				b = append(b, '"')
			}
		case escQuery:
			if s, ok := stringField(p, v); ok {
				b = append(b, url.QueryEscape(s)...)
			} else {
				b = append(b, url.QueryEscape(string(appendField(nil, p, v)))...)
			}
		}
	}
	return b
}

// stringField is the value of a field that is a string already.
func stringField(p *tpart, v *Values) (string, bool) {
	switch p.f {
	case fCheckoutID:
		return v.CheckoutID, true
	case fShopper:
		return v.Shopper, true
	case fSession:
		return v.Session, true
	case fStep:
		return v.Step, true
	case fSKU:
		return v.SKU, true
	case fRun:
		return v.Run, true
	case fShop:
		return v.Shop, true
	case fKept:
		if p.kept < len(v.Kept) {
			return v.Kept[p.kept], true
		}
		return "", true
	}
	return "", false
}

// string renders the template to a string.
func (t *tmpl) string(v *Values) string { return string(t.render(nil, v)) }

func appendField(b []byte, p *tpart, v *Values) []byte {
	switch p.f {
	case fCheckoutID:
		return append(b, v.CheckoutID...)
	case fIdempotencyKey:
		b = append(b, v.CheckoutID...)
		b = append(b, ':')
		return append(b, v.Step...)
	case fShopper:
		return append(b, v.Shopper...)
	case fShopperNumber:
		return strconv.AppendInt(b, int64(v.Number), 10)
	case fSession:
		return append(b, v.Session...)
	case fStep:
		return append(b, v.Step...)
	case fAttempt:
		return strconv.AppendInt(b, int64(v.Attempt), 10)
	case fDeadline:
		if v.Deadline.IsZero() {
			return b
		}
		return appendUTCMillis(b, v.Deadline)
	case fDeadlineUnixMS:
		if v.Deadline.IsZero() {
			return b
		}
		return strconv.AppendInt(b, v.Deadline.UnixMilli(), 10)
	case fSKU:
		return append(b, v.SKU...)
	case fStock:
		return strconv.AppendInt(b, v.Stock, 10)
	case fRun:
		return append(b, v.Run...)
	case fShop:
		return append(b, v.Shop...)
	case fKept:
		if p.kept < len(v.Kept) {
			return append(b, v.Kept[p.kept]...)
		}
	}
	return b
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD, and <, >,
// &, U+2028 and U+2029 escaped as encoding/json does.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, `\u202`...)
			b = append(b, hex[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// appendUTCMillis appends t in UTC as RFC 3339 with milliseconds
// ("2006-01-02T15:04:05.000Z"), what AppendFormat with that layout gives,
// at a fraction of its cost: every shopper's request renders a deadline.
func appendUTCMillis(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	d := func(b []byte, v, n int) []byte {
		var a [4]byte
		for i := n - 1; i >= 0; i-- {
			a[i] = byte('0' + v%10)
			v /= 10
		}
		return append(b, a[:n]...)
	}
	b = d(b, year, 4)
	b = append(b, '-')
	b = d(b, int(month), 2)
	b = append(b, '-')
	b = d(b, day, 2)
	b = append(b, 'T')
	b = d(b, hour, 2)
	b = append(b, ':')
	b = d(b, minute, 2)
	b = append(b, ':')
	b = d(b, sec, 2)
	b = append(b, '.')
	b = d(b, ms, 3)
	return append(b, 'Z')
}
