package checkout

import (
	"cmp"
	"slices"
)

func sortOrders(os []Order) {
	slices.SortFunc(os, func(a, b Order) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.CheckoutID, b.CheckoutID))
	})
}

func sortVoids(vs []Void) {
	slices.SortFunc(vs, func(a, b Void) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.CheckoutID, b.CheckoutID))
	})
}

func sortLedgers(ls []Ledger) {
	slices.SortFunc(ls, func(a, b Ledger) int { return cmp.Compare(a.SKU, b.SKU) })
}
