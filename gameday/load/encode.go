package load

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gameday-dev/gameday/checkout"
)

// appendRequest appends req as the JSON that encoding/json writes for it
// (same fields, same omissions), without reflection: every attempt sends
// one, and reflection's cache footprint made it a measurable part of a
// request's CPU time (FuzzAppendRequest checks the two agree).
func appendRequest(b []byte, req checkout.Request) []byte {
	b = append(b, `{"checkout_id":`...)
	b = appendString(b, req.CheckoutID)
	b = append(b, `,"shopper":`...)
	b = appendString(b, req.Shopper)
	b = append(b, `,"sku":`...)
	b = appendString(b, req.SKU)
	if req.Session != "" {
		b = append(b, `,"session":`...)
		b = appendString(b, req.Session)
	}
	if !req.Deadline.IsZero() {
		b = append(b, `,"deadline":"`...)
		b = req.Deadline.AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	return append(b, '}')
}

// appendString appends s as a JSON string: quotes, backslashes and control
// characters escaped, invalid UTF-8 replaced by U+FFFD, and <, >, & and the
// line and paragraph separators escaped as encoding/json does.
func appendString(b []byte, s string) []byte {
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
			b = strconv.AppendInt(b, int64(r&0xf), 16)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
