package relay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// LostReplyType is the toxic's type name in Toxiproxy's API.
const LostReplyType = "lost_reply"

// LostReply is the lost_reply toxic: a request the toxic picks reaches the
// upstream whole, the upstream does the work and answers, and the answer
// is discarded; the client's connection then ends at once (then: reset)
// or stays open and silent until the client gives up (then: hold).
//
// Which requests: those whose bytes match Match (a regular expression, Go
// syntax; empty matches every request), and of those the ones Pick picks.
// Toxicity, as for every Toxiproxy toxic, is the share of connections it
// acts on, drawn once per connection.
type LostReply struct {
	Match string `json:"match"`
	Then  string `json:"then"`
	Pick
}

// Pipe passes the data through: the relay behind the proxy does the work.
func (t *LostReply) Pipe(stub *toxics.ToxicStub) { passThrough(stub) }

func (t *LostReply) pick() *Pick { return &t.Pick }

func (t *LostReply) check() error {
	if _, err := regexp.Compile(t.Match); err != nil {
		return fmt.Errorf("lost_reply: match: %v", err)
	}
	if t.Then != "" && t.Then != "reset" && t.Then != "hold" {
		return fmt.Errorf("lost_reply: then: %q is neither reset nor hold", t.Then)
	}
	return t.Pick.check(LostReplyType)
}

// CheckLostReply checks a lost_reply toxic's attributes as a client sent
// them (a JSON object): each error names the attribute.
func CheckLostReply(raw json.RawMessage) error { return Check(LostReplyType, raw) }

// FirstLine shows a request in a line of at most 100 characters: an
// HTTP request by its request line ("POST /v1/charges HTTP/1.1"), any
// other by its first bytes, those that are not printable text written as
// \xNN ("*3\x0d\x0a$4\x0d\x0aEVAL…" for Redis, "Q\x00\x00\x00\x0bcommit\x00"
// for a Postgres query).
func FirstLine(req []byte) string {
	if i := bytes.Index(req, []byte("\r\n")); i >= 0 && bytes.Contains(req[:i], []byte(" HTTP/1.")) {
		req = req[:i]
	}
	const most = 100
	var b []byte
	for len(req) > 0 && len(b) < most {
		r, size := utf8.DecodeRune(req)
		if r == utf8.RuneError || r < 0x20 || r == 0x7f {
			b = fmt.Appendf(b, `\x%02x`, req[0])
			req = req[1:]
			continue
		}
		b = append(b, req[:size]...)
		req = req[size:]
	}
	if len(req) > 0 {
		b = append(b, "…"...)
	}
	return string(b)
}
