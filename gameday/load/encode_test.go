package load

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/checkout"
)

// TestAppendRequest: the hand-written encoding is byte for byte what
// encoding/json writes, for the requests a run sends and for strings that
// need escaping.
func TestAppendRequest(t *testing.T) {
	deadline := time.Date(2026, 11, 27, 9, 0, 3, 500_000_000, time.UTC)
	tests := []struct {
		name string
		req  checkout.Request
	}{
		{"a run's request", checkout.Request{CheckoutID: "co-42", Shopper: "co-shopper-42", SKU: "sku-1", Session: "co-session-42", Deadline: deadline}},
		{"a guest: no session", checkout.Request{CheckoutID: "co-1", Shopper: "s", SKU: "sku-1", Deadline: deadline}},
		{"no deadline", checkout.Request{CheckoutID: "co-1", Shopper: "s", SKU: "sku-1"}},
		{"empty", checkout.Request{}},
		{"local time with nanoseconds", checkout.Request{CheckoutID: "co-1", Deadline: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", -3*3600-1800))}},
		{"quotes and backslashes", checkout.Request{CheckoutID: `a"b\c`, SKU: `\"`}},
		{"control characters", checkout.Request{CheckoutID: "\x00\x01\b\f\n\r\t\x1f\x7f"}},
		{"HTML", checkout.Request{SKU: "<a href='x'>&</a>"}},
		{"UTF-8", checkout.Request{Shopper: "Zoë 🛒 日本"}},
		{"invalid UTF-8", checkout.Request{Shopper: "a\xffb\xc3"}},
		{"separators", checkout.Request{Shopper: "\u2028\u2029"}},
	}
	for _, tt := range tests {
		want, err := json.Marshal(tt.req)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendRequest(nil, tt.req); string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, want)
		}
	}
}

func FuzzAppendRequest(f *testing.F) {
	f.Add("co-1", "s-1", "sku-1", "sess-1", int64(1795770003500000000))
	f.Add("a\"\\<>&\u2028", "\x00\xff", "", "", int64(0))
	f.Fuzz(func(t *testing.T, id, shopper, sku, session string, unixNano int64) {
		req := checkout.Request{CheckoutID: id, Shopper: shopper, SKU: sku, Session: session}
		if unixNano != 0 {
			req.Deadline = time.Unix(0, unixNano).UTC()
		}
		want, err := json.Marshal(req)
		if err != nil {
			t.Skip() // a time encoding/json refuses
		}
		if got := appendRequest(nil, req); string(got) != string(want) {
			t.Errorf("got %s\nwant %s", got, want)
		}
	})
}
