package gameday

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/books"
	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/system"
)

// readFactsFrom reads the books of a system whose orders and charges are
// the JSON lists given, served over HTTP. The claim is about how facts are
// read, so a stand-in store is enough.
func readFactsFrom(t *testing.T, statuses, orders, charges string) (*judge.Facts, error) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/orders":
			fmt.Fprint(w, orders)
		case "/charges":
			fmt.Fprint(w, charges)
		}
	}))
	t.Cleanup(srv.Close)
	sys, r := openBooks(t, httpBooks(srv.URL, fmt.Sprintf(`
  orders: {store: api, http: {path: /orders}, fields: {checkout_id: cart}}
  charges:
    store: api
    http: {path: /charges}
    fields: {checkout_id: cart}
    %s
`, statuses)))
	return readFacts(context.Background(), r, sys, "r1")
}

// httpBooks is a system file of a shop at url whose books, given as the
// lines under books:, are read from its HTTP API (store api).
func httpBooks(url, books string) string {
	return fmt.Sprintf(`
name: shop
base_url: %[1]s
sku: s
purchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}]}]}
stores:
  api: {http: "%[1]s"}
books:`, url) + books
}

// openBooks parses a system file and opens its books for run r1; they
// are closed when the test ends.
func openBooks(t *testing.T, src string) (*system.System, *books.Reader) {
	t.Helper()
	sys, err := system.Parse("shop.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := books.Open(context.Background(), sys, system.Values{SKU: "s", Run: "r1"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return sys, r
}

// What the books say is read, other runs' rows left out; a decimal count
// of units is whole; SQL timestamps without a zone are UTC.
func TestReadFactsReadsTheRunsRows(t *testing.T) {
	f, err := readFactsFrom(t, "statuses: {approved: [captured, approved]}",
		`[{"cart": "r1-0", "charge": "ch0", "units": "2.00"}, {"cart": "r0-9"}, {"cart": "r1-1", "units": 1}]`,
		`[{"cart": "r1-0", "id": "ch0", "status": "captured", "created_at": "2026-12-01 10:00:00"},
		  {"cart": "r1-1", "id": "ch1", "status": "approved", "created_at": "2026-12-01T10:00:01Z"},
		  {"cart": "r0-9", "status": "some word of an earlier era"}]`)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Orders) != 2 || f.Orders[0].Units != 2 || f.Orders[1].Units != 1 || !f.OrderCharges {
		t.Errorf("orders %+v", f.Orders)
	}
	want := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if len(f.Charges) != 2 || f.Charges[0].Status != "approved" || !f.Charges[0].At.Equal(want) || f.Charges[1].At.IsZero() || len(f.Notes) != 0 {
		t.Errorf("charges %+v, notes %q", f.Charges, f.Notes)
	}
}

// A fact that cannot be judged stops the reconciliation with an error
// that says what is wrong, rather than let the oracles pass without it.
func TestReadFactsRefusesWhatItCannotJudge(t *testing.T) {
	ok := `[{"cart": "r1-0"}]`
	cases := []struct {
		name                      string
		statuses, orders, charges string
		want                      string
	}{
		// The provider says "captured", and statuses maps only the
		// default words: that charge would be invisible.
		{"unlisted status", "", ok, `[{"cart": "r1-0", "status": "captured"}]`, `status "captured", which books.charges.statuses does not list (approved: approved; declined: declined; voided: voided)`},
		// checkout_id is misnamed: every row would be dropped.
		{"no checkout ids", "", `[{"order": "r1-0"}, {"order": "r1-1"}]`, `[]`, `read books.orders: 2 rows (of every run, not only this one), none with a checkout_id: each item has nothing at "cart"`},
		{"no checkout ids in charges", "", ok, `[{"key": "r1-0", "status": "approved"}]`, `read books.charges: 1 rows (of every run, not only this one), none with a checkout_id: each item has nothing at "cart"`},
		// Units that are not a whole number would count as 1.
		{"fractional units", "", `[{"cart": "r1-0", "units": "2.5"}]`, `[]`, `units "2.5" is not a whole number`},
		{"zero units", "", `[{"cart": "r1-0", "units": 0}]`, `[]`, `units "0" is not a whole number of at least 1`},
		// A time that does not read would hide a charge after leaving.
		{"unreadable created_at", "", ok, `[{"cart": "r1-0", "status": "approved", "created_at": "yesterday"}]`, `created_at "yesterday"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readFactsFrom(t, c.statuses, c.orders, c.charges)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}

// Approved charges without a time are judged, and the run says what
// charged_after_leaving could not see.
func TestReadFactsNotesUntimedCharges(t *testing.T) {
	f, err := readFactsFrom(t, "", `[{"cart": "r1-0"}]`, `[{"cart": "r1-0", "status": "approved"}, {"cart": "r1-1", "status": "declined"}]`)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Charges) != 2 || len(f.Notes) != 1 || !strings.Contains(f.Notes[0], "1 approved charges have no created_at") {
		t.Errorf("charges %+v, notes %q", f.Charges, f.Notes)
	}
}

// A system that says neither when its books are final (settled) nor how
// long to wait (settle_after) has them read the moment the load ends, and
// its run says what that risks; one that says either, or has no books,
// gets no such note.
func TestSettleBooksNotesBooksReadAtOnce(t *testing.T) {
	for _, c := range []struct {
		books string
		note  bool
	}{
		{"books:\n  orders: {store: api, http: {path: /orders}}\n", true},
		{"books:\n  orders: {store: api, http: {path: /orders}}\n  settle_after: 10ms\n", false},
		{"", false},
	} {
		sys, err := system.Parse("shop.yaml", []byte("name: shop\nbase_url: http://127.0.0.1:1\nsku: s\npurchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}]}]}\nstores:\n  api: {http: \"http://127.0.0.1:1\"}\n"+c.books), nil)
		if err != nil {
			t.Fatal(err)
		}
		note, err := settleBooks(context.Background(), nil, sys, 0)
		if err != nil || (note != "") != c.note || (c.note && !strings.Contains(note, "neither books.settled nor books.settle_after is given")) {
			t.Errorf("%q: note %q, error %v; want a note: %v", c.books, note, err, c.note)
		}
		if rule := SettleRule(sys); c.note != strings.HasPrefix(rule, "the moment the load ends") {
			t.Errorf("%q: rule %q", c.books, rule)
		}
	}
}

// Units still held when the books are read are noted: not lost (held is
// counted), but neither sold nor for sale; none held, no note.
func TestUnitsStillHeldAreNoted(t *testing.T) {
	for _, held := range []int{3, 0} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"available": 5, "held": %d}`, held)
		}))
		defer srv.Close()
		sys, r := openBooks(t, httpBooks(srv.URL, `
  stock:
    available: {store: api, http: {path: /stock}, json: available}
    reserved: {store: api, http: {path: /stock}, json: held}
  settle_after: 1ms
`))
		lg := &ledger{sys: sys, books: r}
		f, notes, err := lg.settle(false, "r1")
		if err != nil || f.Reserved == nil || *f.Reserved != int64(held) {
			t.Fatalf("held %d: facts %+v, %v", held, f, err)
		}
		noted := slices.ContainsFunc(notes, func(n string) bool {
			return strings.Contains(n, fmt.Sprintf("%d units of shop were still held (books.stock.reserved) when the books were read", held)) && strings.Contains(n, "books.settled can wait for them")
		})
		if noted != (held > 0) {
			t.Errorf("held %d: notes %q", held, notes)
		}
	}
}
