package ledger

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/gameday/books"
	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/system"
)

// readFacts reads the books of sys after the drill: every fact the system
// describes, the rows of this run only (their checkout ids start with
// prefix). A part that cannot be read is left unknown and named in the
// error; the facts are returned with what could be read.
func readFacts(ctx context.Context, r *books.Reader, sys *system.System, prefix string) (*judge.Facts, error) {
	f := &judge.Facts{Price: sys.Books.PriceOf()}
	b := sys.Books
	// A part that cannot be read is left unknown, and the invariants that
	// need it not checked; the others are judged from what was read, so
	// that a failed query cannot hide an oversell the rest of the books
	// prove. The error names every part that failed.
	var errs []error
	if st := b.Stock; st != nil {
		for _, x := range []struct {
			name string
			q    *system.Query
			dst  **int64
		}{{"available", st.Available, &f.Available}, {"initial", st.Initial, &f.Initial}, {"reserved", st.Reserved, &f.Reserved}, {"sold", st.Sold, &f.Sold}} {
			if x.q == nil {
				continue
			}
			n, err := r.Count(ctx, x.q)
			if err != nil {
				errs = append(errs, fmt.Errorf("read books.stock.%s: %w", x.name, err))
				continue
			}
			*x.dst = &n
		}
		if len(errs) > 0 {
			f.Available, f.Initial, f.Reserved, f.Sold, f.StockUnread = nil, nil, nil, nil, true
		} else if f.Reserved != nil && *f.Reserved < 0 {
			// A count of held units below zero counts nothing: a hold
			// released twice, or a query that counts something else. It
			// is refused (the run cannot pass on it), and read as no hold
			// at all: never as a negative that cancels the unit the second
			// release put back on sale (units_created), nor as units lost.
			errs = append(errs, fmt.Errorf("read books.stock.reserved: %d units held: a count of held units cannot be below zero (a hold released twice, or a query that counts something else)", *f.Reserved))
			f.Reserved = nil
		}
	}
	if b.Orders != nil {
		err := func() error {
			t, err := r.Table(ctx, b.Orders, system.OrderColumns)
			if err == nil {
				err = checkColumns(t, b.Orders, system.OrderColumns)
			}
			if err != nil {
				return fmt.Errorf("read books.orders: %w", err)
			}
			rows := t.Rows
			if err := someHaveIDs(rows, b.Orders); err != nil {
				return fmt.Errorf("read books.orders: %w", err)
			}
			f.OrdersKnown = true
			f.OrderAmounts = givesAmount(t, b.Orders)
			if err := someHaveAmounts(rows, b.Orders, f.OrderAmounts); err != nil {
				return fmt.Errorf("read books.orders: %w", err)
			}
			for _, row := range rows {
				if !ofRun(row["checkout_id"], prefix) {
					if f.OrdersOfOtherRuns == nil {
						f.OrdersOfOtherRuns = map[string]int{}
					}
					f.OrdersOfOtherRuns[row["checkout_id"]]++
					continue
				}
				o := judge.Order{CheckoutID: row["checkout_id"], Charge: row["charge"], Units: 1}
				if o.Amount, err = amountOf(row, "order", f.OrderAmounts); err != nil {
					return fmt.Errorf("read books.orders: %w", err)
				}
				if u := row["units"]; u != "" {
					n, ok := wholeNumber(u)
					if !ok {
						return fmt.Errorf("read books.orders: order %s: units %q is not a whole number of at least 1", o.CheckoutID, u)
					}
					o.Units = n
				}
				f.OrderCharges = f.OrderCharges || o.Charge != ""
				f.Orders = append(f.Orders, o)
			}
			return nil
		}()
		if err != nil {
			f.Orders, f.OrdersKnown, f.OrderAmounts, f.OrderCharges, f.OrdersOfOtherRuns = nil, false, false, false, nil
			errs = append(errs, err)
		}
	}
	if c := b.Charges; c != nil {
		err := func() error {
			t, err := r.Table(ctx, &c.Query, system.ChargeColumns)
			if err == nil {
				err = checkColumns(t, &c.Query, system.ChargeColumns)
			}
			if err != nil {
				return fmt.Errorf("read books.charges: %w", err)
			}
			rows := t.Rows
			if err := someHaveIDs(rows, &c.Query); err != nil {
				return fmt.Errorf("read books.charges: %w", err)
			}
			words := map[string]string{}
			for canon, ws := range c.Statuses {
				for _, w := range ws {
					words[w] = canon
				}
			}
			f.ChargesKnown = true
			f.ChargeAmounts = givesAmount(t, &c.Query)
			// Only an approved charge must give its amount: a provider may
			// leave it out of a decline.
			var approved []books.Row
			for _, row := range rows {
				if words[row["status"]] == "approved" {
					approved = append(approved, row)
				}
			}
			if err := someHaveAmounts(approved, &c.Query, f.ChargeAmounts); err != nil {
				return fmt.Errorf("read books.charges: %w", err)
			}
			// A created_at without a zone, where the file names none, is
			// refused in any row, this run's or not: read before the load,
			// it stops the drill before the sale.
			loc := c.Location()
			if loc == nil {
				for _, row := range rows {
					if _, err := parseTime(row["created_at"], nil); errors.Is(err, errNoZone) {
						return fmt.Errorf("read books.charges: the charge of %s: created_at %q has no zone, and %s gives none: say the zone the shop writes it in (zone: UTC, or a name such as Europe/Berlin), or read it with its zone (timestamptz)", row["checkout_id"], row["created_at"], sys.Where("books.charges"))
					}
				}
			}
			untimed := 0
			for _, row := range rows {
				if !ofRun(row["checkout_id"], prefix) {
					continue
				}
				// A status no word maps is a charge the oracles cannot judge:
				// the run stops rather than pass without it.
				st, ok := words[row["status"]]
				if !ok {
					return fmt.Errorf("read books.charges: the charge of %s has status %q, which books.charges.statuses does not list (%s)", row["checkout_id"], row["status"], statusWords(c.Statuses))
				}
				ch := judge.Charge{CheckoutID: row["checkout_id"], ID: row["id"], Status: st}
				// Only an approved charge took money: a declined or voided
				// one may give no amount.
				if ch.Amount, err = amountOf(row, "charge", f.ChargeAmounts && st == "approved"); err != nil {
					return fmt.Errorf("read books.charges: %w", err)
				}
				if at := row["created_at"]; at != "" {
					t, err := parseTime(at, loc)
					if err != nil {
						return fmt.Errorf("read books.charges: the charge of %s: created_at %q: %w", row["checkout_id"], at, err)
					}
					ch.At = t
				} else if st == "approved" {
					untimed++
				}
				f.Charges = append(f.Charges, ch)
			}
			if untimed > 0 {
				f.Notes = append(f.Notes, fmt.Sprintf("%d approved charges have no created_at: charged_after_leaving counts only those of shoppers who gave up or were refused at their deadline, not a charge made after a shopper left on a refusal", untimed))
			}
			return nil
		}()
		if err != nil {
			f.Charges, f.ChargesKnown, f.ChargeAmounts = nil, false, false
			errs = append(errs, err)
		}
	}
	if h := judge.AmountsNote(f); h != "" {
		f.Notes = append(f.Notes, h)
	}
	if h := f.SoldBasis(); h != "" {
		f.Notes = append(f.Notes, h)
	}
	return f, joinErrors(errs...)
}

// givesAmount reports whether q's rows carry amounts: an SQL answer with
// a column amount (known even without a row), or fields naming it.
func givesAmount(t books.Table, q *system.Query) bool {
	if q.Kind() == "sql" {
		return slices.Contains(t.Columns, "amount")
	}
	return system.GivesAmount(q)
}

// checkColumns refuses an SQL answer whose columns the books cannot read
// as the description means them: one that is none of cols (amount_cents
// for amount: read by nothing, and the invariant it feeds not judged), no
// checkout_id, or a query that selects amount as validate reads it (so
// it may have counted wrong_amounts as judged) with no column amount. The columns are
// known before the load even when no row is, so a misnamed one stops the
// drill then, not after the sale.
func checkColumns(t books.Table, q *system.Query, cols []string) error {
	if q.Kind() != "sql" {
		return nil
	}
	has := strings.Join(t.Columns, ", ")
	for _, c := range t.Columns {
		if !slices.Contains(cols, c) {
			return fmt.Errorf("its answer has a column %s, which the books do not read (they read %s): name it with AS, or leave it out", c, strings.Join(cols, ", "))
		}
	}
	switch {
	case !slices.Contains(t.Columns, "checkout_id"):
		return fmt.Errorf("its answer has no column checkout_id (its columns: %s): name the column of your checkout ids AS checkout_id", has)
	case system.GivesAmount(q) && !slices.Contains(t.Columns, "amount"):
		return fmt.Errorf("the query selects amount (gameday validate reads it so), but its answer has no column amount (its columns: %s): name the column AS amount", has)
	}
	return nil
}

// amountOf reads a row's amount: nil when it has none. One that is not a
// number is an error, and so is none where the books give amounts and the
// row must have one (must): it could not be judged, and passing it would
// hide what it took.
func amountOf(row books.Row, what string, must bool) (*big.Rat, error) {
	s := row["amount"]
	if s == "" {
		if must {
			return nil, fmt.Errorf("the %s of %s has no amount, and the books give amounts (a column or field amount): every %s needs one, to compare what each charge took with what its order costs", what, row["checkout_id"], what)
		}
		return nil, nil
	}
	amt, ok := new(big.Rat).SetString(s)
	if !ok || strings.Contains(s, "/") {
		return nil, fmt.Errorf("the %s of %s: amount %q is not a number (want 1299 or 12.99, in the same unit in orders and charges)", what, row["checkout_id"], s)
	}
	return amt, nil
}

// someHaveIDs refuses rows none of which carries a checkout id: the
// query's columns or fields do not name it, and every oracle would pass
// on nothing. (Rows without one beside rows with one are other traffic.)
func someHaveIDs(rows []books.Row, q *system.Query) error {
	for _, row := range rows {
		if row["checkout_id"] != "" {
			return nil
		}
	}
	if len(rows) == 0 {
		return nil
	}
	const what = "%d rows (of every run, not only this one), none with a checkout_id: "
	switch q.Kind() {
	case "sql":
		return fmt.Errorf(what+"name the column checkout_id (SELECT cart AS checkout_id)", len(rows))
	case "http", "command":
		path := "checkout_id"
		if f := q.Fields["checkout_id"]; f != nil && f.JSON != "" {
			path = f.JSON
		}
		return fmt.Errorf(what+"each item has nothing at %q: map the field your checkout id is in (fields: {checkout_id: cart.id})", len(rows), path)
	}
	return fmt.Errorf(what+"map it in fields", len(rows))
}

// someHaveAmounts refuses rows none of which carries an amount where the
// books give amounts: the path in fields (or the column) finds nothing, and
// the drill would find out only after the sale, from the run's first
// order. Read before the load, the rows are earlier runs'.
func someHaveAmounts(rows []books.Row, q *system.Query, gives bool) error {
	if !gives || len(rows) == 0 {
		return nil
	}
	for _, row := range rows {
		if row["amount"] != "" {
			return nil
		}
	}
	const what = "%d rows (of every run, not only this one; of charges, the approved ones), none with an amount: "
	if f := q.Fields["amount"]; f != nil && f.JSON != "" {
		return fmt.Errorf(what+"each item has nothing at %q (fields.amount): map the field the amount is in (fields: {amount: total_cents}), in one unit on orders and charges", len(rows), f.JSON)
	}
	return fmt.Errorf(what+"the column amount is empty in every row", len(rows))
}

// wholeNumber reads a count such as units: "2", or "2.00" from a decimal
// column; at least 1.
func wholeNumber(s string) (int64, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, n >= 1
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || f < 1 || f > 1e15 {
		return 0, false
	}
	return int64(f), true
}

func statusWords(m map[string][]string) string {
	var out []string
	for _, canon := range slices.Sorted(maps.Keys(m)) {
		out = append(out, canon+": "+strings.Join(m[canon], ", "))
	}
	return strings.Join(out, "; ")
}

// Coverage is what a drill of sys can judge from its books, as its file
// describes them: the invariants it checks, and those it cannot, each with
// the facts it needs. gameday validate prints it, so a user sees what the
// description leaves unjudged before a drill does.
func Coverage(sys *system.System) (checked []string, notChecked map[string]string) {
	var known int64
	f := &judge.Facts{OrdersKnown: sys.Books.Orders != nil, ChargesKnown: sys.Books.Charges != nil, Final: readFinal(sys.Books), Price: sys.Books.PriceOf(), SaysSettled: sys.Books.Settled != nil}
	f.OrderAmounts = f.OrdersKnown && system.GivesAmount(sys.Books.Orders)
	f.ChargeAmounts = f.ChargesKnown && system.GivesAmount(&sys.Books.Charges.Query)
	if st := sys.Books.Stock; st != nil {
		for _, x := range []struct {
			q   *system.Query
			dst **int64
		}{{st.Available, &f.Available}, {st.Available, &f.AvailableBefore}, {st.Initial, &f.Initial}, {st.Reserved, &f.Reserved}, {st.Sold, &f.Sold}} {
			if x.q != nil {
				*x.dst = &known
			}
		}
	}
	return judge.Judgeable(f)
}

// hasBooks reports whether b describes books a drill reads after the load.
func hasBooks(b system.Books) bool { return b.Stock != nil || b.Orders != nil || b.Charges != nil }

// ofRun keeps the rows whose checkout id belongs to this run: it starts
// with the run's prefix and a '-'. A system that outlives one drill holds
// the books of earlier runs too, which are not this run's to reconcile.
func ofRun(id, prefix string) bool { return strings.HasPrefix(id, prefix+"-") }

// parseTime reads created_at: RFC 3339, an SQL timestamp with a zone
// ("2006-01-02 15:04:05+01", fractions optional), Unix seconds or
// milliseconds, or a wall clock without a zone ("2006-01-02 15:04:05", or
// with a T), read in loc. Without loc such a wall clock is errNoZone: the
// zone it was written in is not known, and a guess moves a charge by hours.
func parseTime(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, errNotATime
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z07"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{books.ZonelessLayout, "2006-01-02T15:04:05.999999999"} {
		if _, err := time.Parse(layout, s); err != nil {
			continue
		}
		if loc == nil {
			return time.Time{}, errNoZone
		}
		return time.ParseInLocation(layout, s, loc)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && !math.IsInf(f, 0) {
		if f > 1e11 { // milliseconds
			return time.UnixMilli(int64(f)), nil
		}
		return time.Unix(0, int64(f*1e9)), nil
	}
	return time.Time{}, errNotATime
}

var (
	errNotATime = errors.New(`want RFC 3339, an SQL timestamp ("2006-01-02 15:04:05", with a zone or in books.charges.zone), or Unix seconds or milliseconds`)
	errNoZone   = errors.New("it has no zone, and books.charges.zone names none")
)

// joinErrors is errs on one line, "; " between them (each still matches
// errors.Is and As); nil when there are none.
func joinErrors(errs ...error) error {
	var kept []any
	for _, err := range errs {
		if err != nil {
			kept = append(kept, err)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return fmt.Errorf(strings.TrimSuffix(strings.Repeat("%w; ", len(kept)), "; "), kept...)
}
