package judge

import (
	"fmt"
	"slices"
	"strings"
)

// stockInvariants are the invariants the stock figures decide: what the
// shop's counts say, which are not kept per run.
var stockInvariants = []string{"oversold", "lost_units", "units_created", "stranded_units", "sold_without_order", "orders_beyond_sold"}

// OtherRuns marks the stock invariants of checks unjudged where the books
// gained orders of other runs while this run was on (Facts.OtherRunOrders):
// orders are read by the run's checkout ids, stock is not, so such orders
// may have spent this run's stock, and a lost unit or an oversell in its
// figures is not the system's to answer for. Their counts are kept and
// shown. It returns checks, marked, and what the run should say of it (""
// when no books gained such orders): the verdict is then inconclusive
// unless something else proves a failure.
func OtherRuns(checks []ExpectationResult, books []Books) ([]ExpectationResult, string) {
	n := 0
	var ids []string
	for _, b := range books {
		if b.Facts != nil && b.Facts.OtherRunOrders > 0 {
			n += b.Facts.OtherRunOrders
			ids = append(ids, b.Facts.OtherRunIDs...)
		}
	}
	if n == 0 {
		return checks, ""
	}
	for i, c := range checks {
		if slices.Contains(stockInvariants, c.Invariant) && !c.NotChecked && c.Unjudged == "" {
			checks[i].Unjudged = "read with orders of other runs written during this run"
		}
	}
	named := ""
	if ids = SortIDs(slices.Compact(SortIDs(ids))); len(ids) > 0 {
		named = fmt.Sprintf(" (checkout ids %s)", strings.Join(ids[:min(len(ids), MaxExamples)], ", "))
	}
	return checks, fmt.Sprintf("the books gained %d %s of other runs while this run was on%s: they may have spent this run's stock (an earlier drill's queue not drained, another drill of the same shop), so its stock figures cannot be trusted: run it again once nothing else writes orders", n, plural(n, "order"), named)
}
