package checkout_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/checkout"
)

// A Pod Mover's two steps on real redis-servers: MoveOut takes every
// available unit once no lease is held, MoveIn puts them in on the other
// pod, each once per move id, and both ledgers balance with the moves
// counted.
func TestMoveOutAndInKeepTheBooks(t *testing.T) {
	src := newEnv(t, envOptions{stock: 10})
	dst := newEnv(t, envOptions{})
	ctx := context.Background()
	if a := src.post(checkout.Request{CheckoutID: "co-1", Shopper: "s-1"}); a.code != http.StatusOK {
		t.Fatalf("buy: %d %+v", a.code, a.body)
	}
	inv := src.checkout.Inventory()

	// A purchase in flight holds a lease: nothing moves while it does.
	checkout.ReserveFor(t, inv, "co-2", time.Minute)
	var held *checkout.HeldError
	if _, _, err := inv.MoveOut(ctx, sku, "m1"); !errors.As(err, &held) || held.Held != 1 {
		t.Fatalf("MoveOut with a lease held = %v, want a HeldError of 1", err)
	}
	if code, _, body := src.adminCall("POST", "/admin/stock/move-out", "", `{"sku":"sku-1","move":"m1"}`); code != http.StatusConflict || !strings.Contains(body, `"held":1`) || !strings.Contains(body, `"pending_voids":0`) {
		t.Fatalf("POST move-out with a lease held: %d %s", code, body)
	}
	if _, err := inv.Release(ctx, sku, "co-2", false); err != nil {
		t.Fatal(err)
	}

	n, base, err := inv.MoveOut(ctx, sku, "m1")
	if err != nil || n != 9 || base != 0 {
		t.Fatalf("MoveOut = %d, %v; want the 9 units left", n, err)
	}
	if again, _, err := inv.MoveOut(ctx, sku, "m1"); err != nil || again != 9 {
		t.Fatalf("MoveOut repeated = %d, %v; want the same 9", again, err)
	}
	// A purchase the router sent before it switched, reaching the pod
	// moved from after the move-out, is told to come back, not sold out.
	if a := src.post(checkout.Request{CheckoutID: "co-3", Shopper: "s-3"}); a.code != http.StatusServiceUnavailable || a.body.Reason != "shop_moved" || a.retryAfter == "" {
		t.Fatalf("a purchase on the pod moved from: %d %q %+v, want 503 shop_moved with Retry-After", a.code, a.retryAfter, a.body)
	}
	for range 2 { // the second changes nothing
		if code, _, body := dst.adminCall("POST", "/admin/stock/move-in", "", `{"sku":"sku-1","move":"m1","units":9}`); code != http.StatusOK {
			t.Fatalf("POST move-in: %d %s", code, body)
		}
	}
	if a := dst.post(checkout.Request{CheckoutID: "co-4", Shopper: "s-4"}); a.code != http.StatusOK {
		t.Fatalf("buy on the pod moved to: %d %+v", a.code, a.body)
	}
	s, d := src.ledger(), dst.ledger()
	// An attempt on the pod moved to is numbered from a base of its own:
	// no charge key of the pod moved from is ever made again.
	if len(d.Orders) != 1 || d.Orders[0].ChargeKey != "co-4/1000001" {
		t.Fatalf("orders on the pod moved to: %+v, want co-4's charge key numbered from 1000001", d.Orders)
	}
	if s.MovedOut != 9 || s.Available != 0 || s.Sold != 1 || !s.Balanced() || d.Initial != 0 || d.MovedIn != 9 || d.Available != 8 || d.Sold != 1 || !d.Balanced() {
		t.Fatalf("after the move: from %+v, to %+v", s, d)
	}
	if _, _, err := dst.checkout.Inventory().MoveOut(ctx, "sku-unknown", "m2"); !errors.Is(err, checkout.ErrUnknownSKU) {
		t.Fatalf("MoveOut of a SKU with no stock = %v", err)
	}
}

// A mover that lost the answer to a move-in cannot know whether it
// landed: cancelling takes the units back out if it did, and if it had
// not arrived yet, it never will. Once units of the move were sold there,
// the cancel refuses.
func TestCancelMoveIn(t *testing.T) {
	dst := newEnv(t, envOptions{stock: 1})
	ctx := context.Background()
	inv := dst.checkout.Inventory()

	// Cancelled before it arrived: the late move-in is refused (410).
	if n, err := inv.CancelMoveIn(ctx, sku, "late"); err != nil || n != 0 {
		t.Fatalf("cancel before arrival = %d, %v", n, err)
	}
	if code, _, body := dst.adminCall("POST", "/admin/stock/move-in", "", `{"sku":"sku-1","move":"late","units":5}`); code != http.StatusGone {
		t.Fatalf("a move-in after its cancel: %d %s, want 410", code, body)
	}
	// Arrived, then cancelled: the units go back out, once.
	if err := inv.MoveIn(ctx, sku, "m1", 5, 0); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if code, _, body := dst.adminCall("POST", "/admin/stock/move-in/cancel", "", `{"sku":"sku-1","move":"m1"}`); code != http.StatusOK {
			t.Fatalf("cancel: %d %s", code, body)
		}
	}
	if l := dst.ledger(); l.Available != 1 || l.MovedIn != 0 || !l.Balanced() {
		t.Fatalf("after the cancel: %+v, want the 1 unit it had", l)
	}
	// Sold from already: the cancel refuses and changes nothing.
	if err := inv.MoveIn(ctx, sku, "m2", 1, 0); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if a := dst.post(checkout.Request{CheckoutID: "co-" + string(rune('a'+i)), Shopper: "s"}); a.code != http.StatusOK {
			t.Fatalf("buy: %d %+v", a.code, a.body)
		}
	}
	if _, err := inv.CancelMoveIn(ctx, sku, "m2"); !errors.Is(err, checkout.ErrMoveSpent) {
		t.Fatalf("cancel after a sale = %v, want ErrMoveSpent", err)
	}
	if l := dst.ledger(); l.MovedIn != 1 || l.Sold != 2 || !l.Balanced() || l.Oversold() != 0 {
		t.Fatalf("after the refused cancel: %+v", l)
	}
}

// A rollback gives a move-out's units back in one step, and a move-out
// that arrives after its cancel takes nothing.
func TestCancelMoveOut(t *testing.T) {
	src := newEnv(t, envOptions{stock: 4})
	ctx := context.Background()
	inv := src.checkout.Inventory()
	if _, _, err := inv.MoveOut(ctx, sku, "m1"); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second gives nothing more
		if code, _, body := src.adminCall("POST", "/admin/stock/move-out/cancel", "", `{"sku":"sku-1","move":"m1"}`); code != http.StatusOK {
			t.Fatalf("cancel: %d %s", code, body)
		}
	}
	if a := src.post(checkout.Request{CheckoutID: "co-1", Shopper: "s-1"}); a.code != http.StatusOK {
		t.Fatalf("after the cancel the SKU sells here again: %d %+v", a.code, a.body)
	}
	if l := src.ledger(); l.Available != 3 || l.MovedOut != 0 || !l.Balanced() {
		t.Fatalf("after the cancel: %+v", l)
	}
	if n, err := inv.CancelMoveOut(ctx, sku, "m2"); err != nil || n != 0 {
		t.Fatalf("cancel of a move-out not done = %d, %v", n, err)
	}
	if _, _, err := inv.MoveOut(ctx, sku, "m2"); !errors.Is(err, checkout.ErrMoveCancelled) {
		t.Fatalf("a move-out after its cancel = %v, want ErrMoveCancelled", err)
	}
	if l := src.ledger(); l.Available != 3 {
		t.Fatalf("a cancelled move-out took stock: %+v", l)
	}
}

// A shop moved from A to B and back numbers its attempts on each pod
// above any base the other used: no charge key repeats.
func TestAttemptsNeverRepeatAcrossMoves(t *testing.T) {
	a, b := newEnv(t, envOptions{stock: 10}), newEnv(t, envOptions{})
	ctx := context.Background()
	keyOf := func(e *env, id string) string {
		t.Helper()
		if r := e.post(checkout.Request{CheckoutID: id, Shopper: "s-" + id}); r.code != http.StatusOK || r.body.Order == nil {
			t.Fatalf("buy %s: %d %+v", id, r.code, r.body)
		} else {
			return r.body.Order.ChargeKey
		}
		return ""
	}
	seen := map[string]bool{keyOf(a, "co-1"): true}
	move := func(from, to *env, id string) {
		t.Helper()
		n, base, err := from.checkout.Inventory().MoveOut(ctx, sku, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := to.checkout.Inventory().MoveIn(ctx, sku, id, n, base); err != nil {
			t.Fatal(err)
		}
	}
	move(a, b, "m1")
	if k := keyOf(b, "co-2"); seen[k] || k != "co-2/1000001" {
		t.Fatalf("first key on B: %s", k)
	} else {
		seen[k] = true
	}
	move(b, a, "m2")
	if k := keyOf(a, "co-3"); seen[k] || k != "co-3/2000001" {
		t.Fatalf("first key on A after moving back: %s, want one above B's base", k)
	}
}
