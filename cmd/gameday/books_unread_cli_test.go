package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Books that cannot all be read after the sale are judged as far as they
// were read: an oversell the readable part proves fails the drill (exit
// 1), and the reason names what could not be read. Before, the first
// failed query made the run an error (exit 1 too, but as ERROR, with the
// oversell never judged). Two ways: one shop of two whose books answer
// 500 once the sale began, beside a shop that sold 4 of its 2 units; and
// one shop whose charges answer 500 while its stock shows the oversell.
func TestAnOversellIsJudgedWhenPartOfTheBooksCannotBeRead(t *testing.T) {
	for _, c := range []struct {
		name, shops, pods string
		broken            func(path string) bool // answers 500 once the sale began
		want              string                 // in the reason
	}{
		{"a shop of two unreadable", "shops:\n  - {name: a, pod: pod-1}\n  - {name: b, pod: pod-2}\n", "pods:\n  pod-1: {SHOP: a}\n  pod-2: {SHOP: b}\n",
			func(p string) bool { return strings.HasSuffix(p, "/b") }, "shop b on pod-2: read books.stock.initial"},
		{"one shop's charges unreadable", "", "",
			func(p string) bool { return p == "/charges" }, "read books.charges"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var sold atomic.Bool
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/buy" {
					sold.Store(true)
					return
				}
				if sold.Load() && c.broken(r.URL.Path) {
					http.Error(w, "books unavailable", http.StatusInternalServerError)
					return
				}
				switch {
				case strings.HasPrefix(r.URL.Path, "/stock"):
					// 2 units, 4 sold: an oversell of 2, whatever the sale.
					fmt.Fprint(w, `{"initial": 2, "sold": 4}`)
				case r.URL.Path == "/charges":
					fmt.Fprint(w, `[]`)
				}
			}))
			defer srv.Close()
			code, out, _ := drillSystem(t, shopSystem(srv.URL, `  stock:
    initial: {store: api, http: {path: "/stock/${SHOP:-one}"}, json: initial}
    sold: {store: api, http: {path: "/stock/${SHOP:-one}"}, json: sold}
  charges: {store: api, http: {path: /charges}, fields: {checkout_id: cart, status: status}}
  settle_after: 1ms
`+c.pods), "stock: 5\n"+c.shops+"load:\n  stages: [{duration: 1s, target: 8}]\n")
			if code != exitFailed || !strings.Contains(out, "FAIL") || !strings.Contains(out, "oversold is at most 0") {
				t.Fatalf("exit %d, want %d with FAIL on the oversell\n%s", code, exitFailed, out)
			}
			if !strings.Contains(out, "besides, reconcile the books: ") || !strings.Contains(out, c.want) {
				t.Errorf("the reason does not say what could not be read (%q)\n%s", c.want, out)
			}
		})
	}
}

// Books that books.settled never calls final within settle_within are
// read then and judged as final: settle_within is the longest the shop is
// to take, and what is still open after it is the shop's (a compensation
// that never ran leaves holds open for ever: the pyshop example's bug
// shows so). 3 units neither available nor sold are lost units, the drill
// fails, and the notes say the books did not settle and how to tell a
// wait too short.
func TestBooksThatNeverSettleAreJudgedAsFinal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stock" {
			fmt.Fprint(w, `{"initial": 5, "available": 0, "sold": 2, "pending": 3}`)
		}
	}))
	defer srv.Close()
	code, out, _ := drillSystem(t, shopSystem(srv.URL, `  stock:
    initial: {store: api, http: {path: /stock}, json: initial}
    available: {store: api, http: {path: /stock}, json: available}
    sold: {store: api, http: {path: /stock}, json: sold}
  settled: {store: api, http: {path: /stock}, json: pending}
  settle_within: 300ms
`), "stock: 5\nload:\n  stages: [{duration: 1s, target: 8}]\n")
	if code != exitFailed || !strings.Contains(out, "FAIL") || !strings.Contains(out, "lost units is at most 0 (observed: 3)") {
		t.Fatalf("exit %d, want %d (lost units)\n%s", code, exitFailed, out)
	}
	if !strings.Contains(out, "the books did not settle within 300ms (books.settled last said: 3 still open)") || !strings.Contains(out, "raise settle_within if it only takes longer") {
		t.Errorf("the notes do not say the books did not settle\n%s", out)
	}
}

// A stock fact the system describes that cannot be read is unknown, never
// zero: with books.stock.reserved answering 500 after the sale, the 3
// units it would have said are held are not counted as lost, no stock
// invariant is judged, and the run is an error naming the read that
// failed, not a failure on lost units.
func TestAStockFactThatCannotBeReadIsNotZero(t *testing.T) {
	var sold atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/buy":
			sold.Store(true)
		case "/held":
			if sold.Load() {
				http.Error(w, "unavailable", http.StatusInternalServerError)
				return
			}
			fmt.Fprint(w, `{"held": 0}`)
		case "/stock":
			fmt.Fprint(w, `{"initial": 5, "available": 0, "sold": 2}`)
		}
	}))
	defer srv.Close()
	_, out, _ := drillSystem(t, shopSystem(srv.URL, `  stock:
    initial: {store: api, http: {path: /stock}, json: initial}
    available: {store: api, http: {path: /stock}, json: available}
    sold: {store: api, http: {path: /stock}, json: sold}
    reserved: {store: api, http: {path: /held}, json: held}
  settle_after: 1ms
`), "stock: 5\nload:\n  stages: [{duration: 1s, target: 8}]\n")
	if !strings.Contains(out, "ERROR") || strings.Contains(out, "lost units is at most 0 (observed") {
		t.Fatalf("want an error, with no lost units judged\n%s", out)
	}
	if !strings.Contains(out, "reconcile the books: read books.stock.reserved") {
		t.Errorf("the reason does not name the read that failed\n%s", out)
	}
}
