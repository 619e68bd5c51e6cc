package gameday

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/payment"
)

// books are the three records a run reconciles: the checkout's ledger, the
// provider's charges and the shoppers' own accounts.
type books struct {
	ledger  checkout.Ledger
	charges []payment.Charge
	hasPay  bool
}

// shopperView is what reconciliation needs of one shopper.
type shopperView struct {
	checkoutID string
	outcome    string
	leftAt     time.Time // when the shopper gave up waiting (its deadline)
	// cut: the runner stopped the load while this shopper was in flight;
	// it did not leave of its own accord, so a charge it did not see
	// confirmed is the interruption's, not the checkout's.
	cut bool
}

// fetchBooks reads the checkout's ledger of sku and the provider's charges
// of this run: those whose checkout id starts with prefix and a '-'. A
// provider that outlives one drill (Compose, a service of your own) also
// holds the charges of earlier runs, which are not this run's to reconcile.
func fetchBooks(ctx context.Context, checkoutURL, paymentURL, sku, prefix string) (books, error) {
	var b books
	var ans struct {
		Ledgers []checkout.Ledger `json:"ledgers"`
	}
	if err := getJSON(ctx, checkoutURL+"/admin/ledger?sku="+sku, &ans); err != nil {
		return b, fmt.Errorf("read the checkout's ledger: %w", err)
	}
	if len(ans.Ledgers) != 1 {
		return b, fmt.Errorf("read the checkout's ledger: %d ledgers for %s", len(ans.Ledgers), sku)
	}
	b.ledger = ans.Ledgers[0]
	if paymentURL != "" {
		cs, err := payment.NewClient(paymentURL, nil).List(ctx)
		if err != nil {
			return b, fmt.Errorf("read the provider's charges: %w", err)
		}
		for _, c := range cs {
			if strings.HasPrefix(checkout.CheckoutIDOf(c.Key), prefix+"-") {
				b.charges = append(b.charges, c)
			}
		}
		b.hasPay = true
	}
	return b, nil
}

// reconcile counts every way the books disagree.
func reconcile(b books, shoppers []shopperView, dropped int) Invariants {
	iv := Invariants{Dropped: int64(dropped)}
	l := b.ledger
	iv.Oversold = max(0, l.Sold-l.Initial)
	// After the leases expired nothing is reserved: a unit that is neither
	// available nor sold is lost. (In naive mode available goes negative
	// when it oversells; that is counted as oversold, not lost.)
	iv.LostUnits = max(0, l.Initial-max(0, l.Available)-l.Sold-l.Reserved)
	if !b.hasPay {
		return iv
	}
	// Charges carry the key "<checkout id>/<attempt>"; an order names the
	// key and id of the charge that paid for it.
	byKey := map[string]checkout.Order{}
	for _, o := range l.Orders {
		byKey[o.ChargeKey] = o
	}
	approved := map[string]payment.Charge{}      // by key
	perCheckout := map[string][]payment.Charge{} // approved, by checkout id
	for _, c := range b.charges {
		if c.Status != payment.StatusApproved {
			continue
		}
		approved[c.Key] = c
		id := checkout.CheckoutIDOf(c.Key)
		perCheckout[id] = append(perCheckout[id], c)
		if _, ok := byKey[c.Key]; !ok {
			iv.ChargesWithoutOrder++
		}
	}
	// One checkout id buys one unit: a second approved charge is a double
	// charge.
	for _, cs := range perCheckout {
		iv.DoubleCharges += int64(max(0, len(cs)-1))
	}
	for _, o := range l.Orders {
		if c, ok := approved[o.ChargeKey]; !ok || c.ID != o.ChargeID {
			iv.OrdersWithoutCharge++
		}
	}
	for _, s := range shoppers {
		if s.outcome == "confirmed" || s.cut {
			continue
		}
		for _, c := range perCheckout[s.checkoutID] {
			// Charged, and the shopper left without a confirmation.
			if c.CreatedAt.After(s.leftAt) || s.outcome == "gave_up" || s.outcome == "too_late" {
				iv.ChargedAfterLeaving++
			}
		}
	}
	return iv
}

func summarise(b books) (LedgerSummary, ChargeSummary) {
	ls := LedgerSummary{Initial: b.ledger.Initial, Available: b.ledger.Available, Reserved: b.ledger.Reserved, Sold: b.ledger.Sold, Orders: len(b.ledger.Orders)}
	var cs ChargeSummary
	for _, c := range b.charges {
		switch c.Status {
		case payment.StatusApproved:
			cs.Approved++
		case payment.StatusDeclined:
			cs.Declined++
		case payment.StatusVoided:
			cs.Voided++
		}
	}
	return ls, cs
}

func getJSON(ctx context.Context, url string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
