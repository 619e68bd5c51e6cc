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
	if _, err := inv.MoveOut(ctx, sku, "m1"); !errors.As(err, &held) || held.Held != 1 {
		t.Fatalf("MoveOut with a lease held = %v, want a HeldError of 1", err)
	}
	if code, _, body := src.adminCall("POST", "/admin/stock/move-out", "", `{"sku":"sku-1","move":"m1"}`); code != http.StatusConflict || !strings.Contains(body, `"held":1`) {
		t.Fatalf("POST move-out with a lease held: %d %s", code, body)
	}
	if _, err := inv.Release(ctx, sku, "co-2", false); err != nil {
		t.Fatal(err)
	}

	n, err := inv.MoveOut(ctx, sku, "m1")
	if err != nil || n != 9 {
		t.Fatalf("MoveOut = %d, %v; want the 9 units left", n, err)
	}
	if again, err := inv.MoveOut(ctx, sku, "m1"); err != nil || again != 9 {
		t.Fatalf("MoveOut repeated = %d, %v; want the same 9", again, err)
	}
	if a := src.post(checkout.Request{CheckoutID: "co-3", Shopper: "s-3"}); a.body.Status != "sold_out" {
		t.Fatalf("a purchase on the pod moved from: %d %+v, want sold_out", a.code, a.body)
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
	if s.MovedOut != 9 || s.Available != 0 || s.Sold != 1 || !s.Balanced() || d.Initial != 0 || d.MovedIn != 9 || d.Available != 8 || d.Sold != 1 || !d.Balanced() {
		t.Fatalf("after the move: from %+v, to %+v", s, d)
	}
	if _, err := dst.checkout.Inventory().MoveOut(ctx, "sku-unknown", "m2"); !errors.Is(err, checkout.ErrUnknownSKU) {
		t.Fatalf("MoveOut of a SKU with no stock = %v", err)
	}
}
