package checkout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/payment"
)

// Starting a SKU afresh never drops money work. A purchase whose checkout
// died after the charge leaves a lease, then an expired lease for the
// sweeper, then a void the provider (cut off) cannot take: through all of
// it SetStock and PUT /admin/stock refuse and change nothing. Once the
// provider is back the charge is voided, the books settle, and the stock
// can be set. (SetStock once wiped the lease and the void: the charge
// stayed approved for good.)
func TestSetStockWaitsForMoneyWork(t *testing.T) {
	e := newEnv(t, envOptions{stock: 3, cfg: checkout.Config{SweepInterval: 50 * time.Millisecond, LateClaimGrace: 200 * time.Millisecond}})
	ctx := context.Background()
	inv := e.checkout.Inventory()
	res := checkout.ReserveFor(t, inv, "co-dead", 2*time.Second)
	pay := payment.NewClient(e.payURL, nil)
	if ch, err := pay.Charge(ctx, payment.ChargeRequest{Key: "co-dead/" + res, AmountCents: 1299, Shopper: "s-dead", SKU: sku}); err != nil || ch.Status != payment.StatusApproved {
		t.Fatalf("charge: %+v %v", ch, err)
	}
	e.setEnabled("payment", false) // the sweeper's void cannot reach the provider

	refused := func(stage string) *checkout.UnsettledError {
		t.Helper()
		err := inv.SetStock(ctx, sku, 100)
		var u *checkout.UnsettledError
		if !errors.As(err, &u) {
			t.Fatalf("%s: SetStock = %v, want an UnsettledError", stage, err)
		}
		if code := e.putStock(100); code != http.StatusConflict {
			t.Errorf("%s: PUT /admin/stock answered %d, want 409", stage, code)
		}
		if l := e.ledger(); l.Initial != 3 || len(e.payment.Charges()) != 1 {
			t.Fatalf("%s: a refused reset changed the books: %+v", stage, l)
		}
		return u
	}
	if u := refused("lease held"); u.Held != 1 {
		t.Errorf("lease held: %+v", u)
	}
	if l := e.summaryAgrees("lease held"); l.Reserved != 1 || l.Settled {
		t.Errorf("lease held: summary %+v", l)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		l := e.ledger()
		return len(l.Voids) == 1 && !l.Settled, fmt.Sprintf("ledger %+v", l)
	})
	time.Sleep(200 * time.Millisecond) // a void attempt has failed by now
	if u := refused("void pending"); u.PendingVoids != 1 || u.Held != 0 {
		t.Errorf("void pending: %+v", u)
	}
	if l := e.summaryAgrees("void pending"); l.PendingVoids != 1 || l.Reserved != 0 || l.Settled {
		t.Errorf("void pending: summary %+v", l)
	}
	if cs := e.payment.Charges(); cs[0].Status != payment.StatusApproved {
		t.Fatalf("the provider was cut off, yet the charge is %s", cs[0].Status)
	}

	e.setEnabled("payment", true)
	eventually(t, 15*time.Second, func() (bool, string) {
		cs := e.payment.Charges()
		return cs[0].Status == payment.StatusVoided && e.ledger().Settled, fmt.Sprintf("charges %s, ledger %+v", chargesString(cs), e.ledger())
	})
	if l := e.summaryAgrees("settled"); !l.Settled || l.PendingVoids != 0 {
		t.Errorf("settled: summary %+v", l)
	}
	if code, _, body := e.adminCall("GET", "/admin/ledger?summary=maybe&sku="+sku, "", ""); code != http.StatusBadRequest || !strings.Contains(body, `summary=\"maybe\"`) {
		t.Errorf("summary=maybe: %d %s, want 400 naming the value", code, body)
	}
	if code := e.putStock(100); code != http.StatusOK {
		t.Fatalf("settled: PUT /admin/stock answered %d", code)
	}
	if l := e.ledger(); l.Initial != 100 || l.Available != 100 || len(l.Voids) != 0 {
		t.Errorf("after the reset: %+v", l)
	}
}

// summaryAgrees reads the ledger whole and as a summary, over the admin
// API as a runner polls it, and fails the test unless the summary has the
// same counts, pending voids and settled, and neither orders nor voids. The
// caller holds the books still (a lease not yet due, a provider cut off).
func (e *env) summaryAgrees(stage string) checkout.Ledger {
	e.t.Helper()
	full := e.ledger()
	code, _, body := e.adminCall("GET", "/admin/ledger?summary=true&sku="+sku, "", "")
	if code != http.StatusOK {
		e.t.Fatalf("%s: GET /admin/ledger?summary=true: %d %s", stage, code, body)
	}
	var got struct {
		Ledgers []map[string]json.RawMessage `json:"ledgers"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || len(got.Ledgers) != 1 {
		e.t.Fatalf("%s: summary %s: %v", stage, body, err)
	}
	for _, list := range []string{"orders", "voids"} {
		if _, ok := got.Ledgers[0][list]; ok {
			e.t.Errorf("%s: the summary lists %s: %s", stage, list, body)
		}
	}
	var typed struct {
		Ledgers []checkout.Ledger `json:"ledgers"`
	}
	if err := json.Unmarshal([]byte(body), &typed); err != nil {
		e.t.Fatalf("%s: summary %s: %v", stage, body, err)
	}
	sum := typed.Ledgers[0]
	full.Orders, full.Voids = nil, nil
	if !reflect.DeepEqual(sum, full) {
		e.t.Errorf("%s: summary %+v, whole ledger %+v", stage, sum, full)
	}
	return sum
}

func (e *env) putStock(units int64) int {
	e.t.Helper()
	body := fmt.Sprintf(`{"sku":%q,"units":%d}`, sku, units)
	req, err := http.NewRequest(http.MethodPut, e.url+"/admin/stock", bytes.NewReader([]byte(body)))
	if err != nil {
		e.t.Fatal(err)
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A SKU left half set up (its initial stock written, nothing else, as two
// separate writes once could leave it) is set up by InitStock, not kept:
// every reserve would fail on it otherwise. InitStock is now one script.
func TestInitStockCompletesAHalfSetSKU(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	rdb := checkout.NewRedisClient(e.proxyUpstream("inventory"), time.Second)
	t.Cleanup(func() { _ = rdb.Close() })
	if err := rdb.HSet(ctx, "gameday:inv:{"+sku+"}:stock", "initial", 4).Err(); err != nil {
		t.Fatal(err)
	}
	set, err := e.checkout.Inventory().InitStock(ctx, sku, 4)
	if err != nil || !set {
		t.Fatalf("InitStock on a half-set SKU: set=%v err=%v", set, err)
	}
	if a := e.post(shopper(1)); a.body.Status != checkout.OutcomeConfirmed {
		t.Fatalf("purchase after InitStock: %d %+v", a.code, a.body)
	}
	if l := e.ledger(); l.Initial != 4 || l.Sold != 1 || !l.Balanced() {
		t.Errorf("books: %+v", l)
	}
}

// A checkout id is bound to the shopper who bought with it: another
// shopper posting it gets the 400 any id used elsewhere gets, with nothing
// of the order (it once got the order, its charge id included), and no
// charge is made; the buyer asking again still gets the order replayed.
func TestAnotherShoppersCheckoutIDRevealsNothing(t *testing.T) {
	e := newEnv(t, envOptions{stock: 5})
	first := e.post(shopper(1))
	if first.body.Status != checkout.OutcomeConfirmed || first.body.Order == nil {
		t.Fatalf("first: %+v", first.body)
	}
	thief := shopper(1)
	thief.Shopper, thief.Session = "s-9", "sess-9"
	a := e.post(thief)
	if a.code != http.StatusBadRequest || a.body.Status != checkout.OutcomeInvalid || a.body.Order != nil || a.body.Replayed {
		t.Errorf("another shopper's replay: %d %+v", a.code, a.body)
	}
	if again := e.post(shopper(1)); again.body.Status != checkout.OutcomeConfirmed || !again.body.Replayed || again.body.Order == nil || again.body.Order.ChargeID != first.body.Order.ChargeID {
		t.Errorf("the buyer's replay: %+v", again.body)
	}
	if b := e.books(); b.approved != 1 || len(e.payment.Charges()) != 1 || b.ledger.Sold != 1 {
		t.Errorf("books: %+v, charges %s", b, chargesString(e.payment.Charges()))
	}
}
