package system

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestTemplateRender(t *testing.T) {
	v := &Values{CheckoutID: "co-1", Shopper: "s <1>", Number: 7, Session: "", Step: "pay", Attempt: 2,
		Deadline: time.Date(2026, 12, 1, 9, 0, 0, 5e6, time.UTC), Kept: []string{`a"b&c`}, SKU: "sku 1", Stock: 40, Run: "r1"}
	sc := scope{shopper: true, kept: map[string]int{"tok": 0}}
	for _, c := range []struct{ src, want string }{
		{"plain", "plain"},
		{"{{.CheckoutID}}/{{.Attempt}}", "co-1/2"},
		{"{{.IdempotencyKey}}", "co-1:pay"},
		{`{"s":{{json .Shopper}}}`, `{"s":"s \u003c1\u003e"}`},
		{`{{json .Session}}`, `""`},
		{`{{json .ShopperNumber}}`, `"7"`},
		{"{{.Deadline}} {{.DeadlineUnixMS}}", "2026-12-01T09:00:00.005Z 1796115600005"},
		{"{{json .Kept.tok}}", `"a\"b\u0026c"`},
		{"/p/{{urlquery .SKU}}?t={{urlquery .Deadline}}", "/p/sku+1?t=2026-12-01T09%3A00%3A00.005Z"},
		{"{{.SKU}} {{.Run}}{{/* note */}}", "sku 1 r1"},
	} {
		tm, err := compileTemplate(c.src, sc)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if got := tm.string(v); got != c.want {
			t.Errorf("%s = %q, want %q", c.src, got, c.want)
		}
	}
	// Setup and books see the stock.
	if tm, err := compileTemplate("{{.Stock}}", scope{}); err != nil || tm.string(v) != "40" {
		t.Errorf("{{.Stock}} in books: %v", err)
	}
	for _, c := range []struct{ src, want string }{
		{"{{.CheckoutID}}", "only a purchase step has it"}, // books see SKU, Stock, Run
		{"{{.Kept.tok}}", "kept values exist only in a purchase's steps"},
		{"{{range .SKU}}{{end}}", "only {{.Field}}"},
		{"{{printf \"%s\" .SKU}}", "not defined"},
		{"{{.SKU", "template:"},
	} {
		if _, err := compileTemplate(c.src, scope{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.src, err, c.want)
		}
	}
	// A step does not see the stock.
	if _, err := compileTemplate("{{.Stock}}", sc); err == nil || !strings.Contains(err.Error(), ".Stock: setup and books only") {
		t.Errorf("{{.Stock}} in a step: %v", err)
	}
}

// {{json .X}} writes what encoding/json writes for the string.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"uote`, "back\\slash", "\x00\x1f", "<&>", "\u2028\u2029", "\xff\xfe", "é ü 中"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

// A deadline renders exactly as time's own RFC 3339 layout with
// milliseconds, across years, zones, and the edges of a second.
func TestAppendUTCMillisIsTheLayout(t *testing.T) {
	const layout = "2006-01-02T15:04:05.000Z07:00"
	east := time.FixedZone("east", 5*3600+30*60)
	times := []time.Time{
		time.Date(2026, 12, 1, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(2026, 12, 2, 4, 29, 0, 1_000_000, east), // another day in UTC
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), // past four digits: time's own
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		times = append(times, time.Unix(r.Int64N(1<<36)-1<<35, r.Int64N(1e9)).In(east))
	}
	for _, tm := range times {
		if got, want := string(appendUTCMillis([]byte("x"), tm)), "x"+tm.UTC().Format(layout); got != want {
			t.Fatalf("%v: %q, want %q", tm, got, want)
		}
	}
}
