package ledger

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
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
	return readFactsWith(t, "{checkout_id: cart}", "{checkout_id: cart}", statuses, orders, charges)
}

// readFactsWithAmounts is readFactsFrom with the orders' amounts at price
// and the charges' at took.
func readFactsWithAmounts(t *testing.T, statuses, orders, charges string) (*judge.Facts, error) {
	t.Helper()
	return readFactsWith(t, "{checkout_id: cart, amount: price}", "{checkout_id: cart, amount: took}", statuses, orders, charges)
}

// readFactsWith is readFactsFrom with the orders' and the charges' fields
// given.
func readFactsWith(t *testing.T, orderFields, chargeFields, statuses, orders, charges string) (*judge.Facts, error) {
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
  orders: {store: api, http: {path: /orders}, fields: %s}
  charges:
    store: api
    http: {path: /charges}
    fields: %s
    %s
`, orderFields, chargeFields, statuses)))
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
// of units is whole; SQL timestamps without a zone are read in the zone
// the file gives.
func TestReadFactsReadsTheRunsRows(t *testing.T) {
	f, err := readFactsFrom(t, "statuses: {approved: [captured, approved]}\n    zone: UTC",
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
		// An amount that does not read, or is missing where the books
		// give amounts, would hide what a charge took.
		{"amount with its currency", "", `[{"cart": "r1-0", "price": "19.99 EUR"}]`, `[]`, `read books.orders: the order of r1-0: amount "19.99 EUR" is not a number`},
		{"amount as a fraction", "", `[{"cart": "r1-0", "price": 5}]`, `[{"cart": "r1-0", "status": "approved", "took": "1999/100"}]`, `amount "1999/100" is not a number`},
		{"approved charge without amount", "", `[{"cart": "r1-0", "price": 5}]`, `[{"cart": "r1-0", "status": "approved"}, {"cart": "r1-1", "status": "approved", "took": 5}]`, `read books.charges: the charge of r1-0 has no amount, and the books give amounts`},
		{"order without amount", "", `[{"cart": "r1-0"}, {"cart": "r1-1", "price": 5}]`, `[]`, `read books.orders: the order of r1-0 has no amount, and the books give amounts`},
		// An amount path that finds nothing in any row: refused at the
		// read before the load (rows of earlier runs), not after the
		// sale from the run's first order.
		{"amount path finds nothing", "", `[{"cart": "r0-1", "total": 5}]`, `[]`, `read books.orders: 1 rows (of every run, not only this one; of charges, the approved ones), none with an amount: each item has nothing at "price" (fields.amount)`},
		{"charge amount path finds nothing", "", `[]`, `[{"cart": "r0-1", "status": "approved", "amount": 5}]`, `read books.charges: 1 rows (of every run, not only this one; of charges, the approved ones), none with an amount: each item has nothing at "took" (fields.amount)`},
		// A time that does not read would hide a charge after leaving.
		{"unreadable created_at", "", ok, `[{"cart": "r1-0", "status": "approved", "created_at": "yesterday"}]`, `created_at "yesterday"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			read := readFactsFrom
			if strings.Contains(c.name, "amount") {
				read = readFactsWithAmounts
			}
			_, err := read(t, c.statuses, c.orders, c.charges)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}

// Amounts are read where the books give them: a declined charge may give
// none, and the first wrong one is noted with both amounts; amounts every
// one a hundred times their order's are noted as two units.
func TestReadFactsReadsAmounts(t *testing.T) {
	f, err := readFactsWithAmounts(t, "", `[{"cart": "r1-0", "charge": "ch0", "price": "19.99"}, {"cart": "r1-2", "charge": "ch2", "price": 19.99}, {"cart": "r0-9"}]`,
		`[{"cart": "r1-2", "id": "ch2", "status": "approved", "took": 19.99}, {"cart": "r1-0", "id": "ch0", "status": "approved", "took": 19.98}, {"cart": "r1-1", "status": "declined"}]`)
	if err != nil {
		t.Fatal(err)
	}
	if !f.OrderAmounts || !f.ChargeAmounts || f.Orders[0].Amount.FloatString(2) != "19.99" || f.Charges[1].Amount.FloatString(2) != "19.98" || f.Charges[2].Amount != nil {
		t.Fatalf("amounts not read: orders %+v, charges %+v", f.Orders, f.Charges)
	}
	if iv, nc := judge.Reconcile(f, nil, 0); iv.WrongAmounts != 1 || nc["wrong_amounts"] != "" {
		t.Errorf("wrong amounts %d (not checked: %q), want 1", iv.WrongAmounts, nc["wrong_amounts"])
	}
	if want := "wrong amounts: the charge ch0 of r1-0 took 19.98 for an order of 19.99 (the first of 1)"; !slices.Contains(f.Notes, want) {
		t.Errorf("notes %q, want %q", f.Notes, want)
	}

	f, err = readFactsWithAmounts(t, "", `[{"cart": "r1-0", "price": "19.99"}, {"cart": "r1-1", "price": "5"}]`,
		`[{"cart": "r1-0", "status": "approved", "took": 1999}, {"cart": "r1-1", "status": "approved", "took": "500"}]`)
	if err != nil {
		t.Fatal(err)
	}
	units := func(n string) bool {
		return strings.HasPrefix(n, "every approved charge took 100 times what its order costs")
	}
	if iv, _ := judge.Reconcile(f, nil, 0); iv.WrongAmounts != 2 || !slices.ContainsFunc(f.Notes, units) {
		t.Errorf("cents against dollars: wrong amounts %d, notes %q", iv.WrongAmounts, f.Notes)
	}
}

// An amount is read from a JSON answer only where fields names it: a key
// that happens to be called amount is not compared unasked, and neither
// side's amounts are judged without the other's.
func TestAmountsAreReadWhereTheFieldsNameThem(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `[{"cart": "r1-0", "id": "ch0", "status": "approved", "amount": 1999}]`)
	}))
	defer srv.Close()
	for _, c := range []struct {
		fields       string
		orders, both bool
	}{
		{"{checkout_id: cart}", false, false},
		{"{checkout_id: cart, amount: amount}", true, true},
	} {
		sys, r := openBooks(t, httpBooks(srv.URL, fmt.Sprintf(`
  orders: {store: api, http: {path: /orders}, fields: %s}
  charges: {store: api, http: {path: /charges}, fields: {checkout_id: cart, amount: amount}}
`, c.fields)))
		f, err := readFacts(context.Background(), r, sys, "r1")
		if err != nil {
			t.Fatal(err)
		}
		_, nc := judge.Reconcile(f, nil, 0)
		// The key amount of an order is read only where fields names it.
		if len(f.Orders) != 1 || (f.Orders[0].Amount != nil) != c.orders {
			t.Errorf("orders' fields %s: orders %+v", c.fields, f.Orders)
		}
		if f.OrderAmounts != c.orders || (nc["wrong_amounts"] == "") != c.both {
			t.Errorf("orders' fields %s: order amounts %v, wrong_amounts not checked: %q", c.fields, f.OrderAmounts, nc["wrong_amounts"])
		}
		checked, _ := Coverage(sys)
		if slices.Contains(checked, "wrong_amounts") != c.both {
			t.Errorf("orders' fields %s: validate's coverage %v", c.fields, checked)
		}
	}
}

// An SQL answer's columns are checked as soon as they are known, before
// the load even when no row is: one the books do not read (amount_cents
// for amount), no checkout_id, or amount mentioned and not given stop the
// drill; amounts are judged from the columns, whether or not a row has
// come yet.
func TestSQLColumnsAreCheckedBeforeTheLoad(t *testing.T) {
	q := func(sql string) *system.Query { return &system.Query{Store: "db", SQL: sql} }
	for _, c := range []struct {
		sql     string
		cols    []string
		want    string
		amounts bool
	}{
		{"SELECT cart AS checkout_id, charge, total AS amount FROM orders", []string{"checkout_id", "charge", "amount"}, "", true},
		{"SELECT cart AS checkout_id, charge FROM orders", []string{"checkout_id", "charge"}, "", false},
		{"SELECT cart AS checkout_id, price*qty*100 AS amount_cents FROM orders", []string{"checkout_id", "amount_cents"},
			"its answer has a column amount_cents, which the books do not read (they read checkout_id, charge, units, amount)", false},
		{"SELECT cart, charge FROM orders", []string{"cart", "charge"}, "its answer has a column cart", false},
		{"SELECT charge FROM orders", []string{"charge"}, "its answer has no column checkout_id (its columns: charge)", false},
		{"SELECT cart AS checkout_id, /* the amount, in cents */ charge FROM orders", []string{"checkout_id", "charge"},
			"the query selects amount (gameday validate reads it so), but its answer has no column amount (its columns: checkout_id, charge)", false},
		// amount outside the select list is not a column.
		{"SELECT cart AS checkout_id FROM orders WHERE amount > 0", []string{"checkout_id"}, "", false},
	} {
		tb := books.Table{Columns: c.cols}
		err := checkColumns(tb, q(c.sql), system.OrderColumns)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.sql, err, c.want)
		}
		if err == nil && givesAmount(tb, q(c.sql)) != c.amounts {
			t.Errorf("%s: amounts %v, want %v", c.sql, !c.amounts, c.amounts)
		}
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
		note, _, err := settleBooks(context.Background(), nil, sys, 0)
		if err != nil {
			t.Fatal(err)
		}
		if (note != "") != c.note || (c.note && !strings.Contains(note, "neither books.settled nor books.settle_after is given")) {
			t.Errorf("%q: note %q; want a note: %v", c.books, note, c.note)
		}
		if rule := SettleRule(sys); c.note != strings.HasPrefix(rule, "the moment the load ends") {
			t.Errorf("%q: rule %q", c.books, rule)
		}
	}
}

// Units still held when the books are read are noted: not lost (held is
// counted), but neither sold nor for sale; none held, no note.
func TestUnitsStillHeldAreNoted(t *testing.T) {
	for _, c := range []struct {
		settle string // the books' settle step
		final  bool
		want   string // in the note
	}{
		// After settle_after the books are final: held units are
		// stranded_units, and the note says how to tell a leak from a
		// wait too short.
		{"  settle_after: 1ms\n", true, "those not also counted as sold (units_created) count as stranded_units"},
		// Read the moment the load ends, a hold may be on its way.
		{"", false, "books.settled can wait for them"},
		// books.settled counts the holds: with none it says final at
		// once; with some left it never does, and books read when
		// settle_within ran out are judged as final: a hold kept longer
		// than the shop is to take is stranded.
		{"  settled: {store: api, http: {path: /stock}, json: held}\n  settle_within: 300ms\n", true, "count as stranded_units"},
	} {
		for _, held := range []int{3, 0} {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, `{"available": 5, "held": %d}`, held)
			}))
			defer srv.Close()
			sys, r := openBooks(t, httpBooks(srv.URL, `
  stock:
    available: {store: api, http: {path: /stock}, json: available}
    reserved: {store: api, http: {path: /stock}, json: held}
`+c.settle))
			lg := &Ledger{Sys: sys, books: r}
			f, notes, err := lg.settle(false, "r1")
			if err != nil || f.Reserved == nil || *f.Reserved != int64(held) || f.Final != c.final {
				t.Fatalf("held %d, %q: facts %+v, %v", held, c.settle, f, err)
			}
			noted := slices.ContainsFunc(notes, func(n string) bool {
				return strings.Contains(n, fmt.Sprintf("%d units of shop were still held (books.stock.reserved) when the books were read", held)) && strings.Contains(n, c.want)
			})
			if noted != (held > 0) {
				t.Errorf("held %d, %q: notes %q", held, c.settle, notes)
			}
		}
	}
}

// Declines may give no amount: rows of earlier runs that are all
// declines, none with an amount, do not stop the drill.
func TestDeclinesNeedNoAmount(t *testing.T) {
	if _, err := readFactsWithAmounts(t, "", `[{"cart": "r0-1", "price": 5}]`, `[{"cart": "r0-1", "status": "declined"}, {"cart": "r0-2", "status": "declined"}]`); err != nil {
		t.Fatalf("declines without amounts: %v", err)
	}
}

// books.settled failing every ask until settle_within runs out never said
// the books were final: the drill says so (an error that names the last
// failure), reads them as books read before they settle (not final: no
// stranded units, and only an oversell judged), and does not judge them
// as final, which would blame the shop for what was still on its way. One
// answer before the failures is the system's word: the books are then
// judged as final, and the note says its last ask failed.
func TestSettledThatNeverAnswersIsNotFinal(t *testing.T) {
	for _, answered := range []int{0, 1} {
		var asks atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/settled" && asks.Add(1) > int64(answered) {
				http.Error(w, "settle check down", http.StatusInternalServerError)
				return
			}
			fmt.Fprint(w, `{"available": 5, "held": 2}`)
		}))
		defer srv.Close()
		sys, r := openBooks(t, httpBooks(srv.URL, `
  stock:
    available: {store: api, http: {path: /stock}, json: available}
    reserved: {store: api, http: {path: /stock}, json: held}
  settled: {store: api, http: {path: /settled}, json: held}
  settle_within: 400ms
`))
		lg := &Ledger{Sys: sys, books: r}
		rd, err := Settle([]*Ledger{lg}, false, "")
		facts, notes := rd.Facts, rd.Notes
		if answered == 0 {
			if err == nil || !strings.Contains(err.Error(), "books.settled never answered within 400ms") || !strings.Contains(err.Error(), "500") {
				t.Errorf("never answered: error %v", err)
			}
			if !rd.Unsettled || facts[0].Final || facts[0].Available == nil {
				t.Errorf("never answered: unsettled %v, facts %+v: want unsettled, not final, read", rd.Unsettled, facts[0])
			}
			continue
		}
		if err != nil || rd.Unsettled || !facts[0].Final {
			t.Errorf("answered once: %v, unsettled %v, final %v", err, rd.Unsettled, facts[0].Final)
		}
		if !slices.ContainsFunc(notes, func(n string) bool {
			return strings.Contains(n, "books.settled last said: ") && strings.Contains(n, "its last ask failed")
		}) {
			t.Errorf("answered once: notes %q", notes)
		}
	}
}

// The orders of other runs are counted by checkout id as the books are
// read, and those the books gained between the read before the load and
// the one after are this run's to know of: a leftover order of run r0
// written during r1 is found, and one that was there before is not.
func TestOrdersOfOtherRunsWrittenDuringTheRunAreFound(t *testing.T) {
	orders := `[{"cart": "r0-1"}, {"cart": "r1-1"}]`
	before, err := readFactsFrom(t, "", orders, `[]`)
	if err != nil {
		t.Fatal(err)
	}
	orders = `[{"cart": "r0-1"}, {"cart": "r0-2"}, {"cart": "r0-2"}, {"cart": "r1-1"}, {"cart": ""}]`
	after, err := readFactsFrom(t, "", orders, `[]`)
	if err != nil {
		t.Fatal(err)
	}
	n, ids := newRows(before.OrdersOfOtherRuns, after.OrdersOfOtherRuns)
	if n != 3 || !slices.Equal(ids, []string{"r0-2"}) || len(after.Orders) != 1 {
		t.Errorf("orders of other runs written during the run: %d %v (orders of this run %v), want 3 [r0-2]", n, ids, after.Orders)
	}
}
