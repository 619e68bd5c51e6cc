package flash

import "math"

// Figure names one figure, for tables and run.json.
type Figure struct {
	Key     string // the JSON name in Figures, such as "success_p95_ms"
	Unit    string // "shoppers", "ms", "share", ...
	Meaning string // one line
}

// figures is the one list of the figures, in the order tables show them,
// with how to read each from a Figures.
var figures = []struct {
	Figure
	get func(Figures) float64
}{
	{Figure{"shoppers", "shoppers", "arrivals the run reached, dropped ones included"},
		func(f Figures) float64 { return float64(f.Shoppers) }},
	{Figure{"confirmed", "shoppers", "shoppers who saw a confirmation"},
		func(f Figures) float64 { return float64(f.Confirmed) }},
	{Figure{"timeouts", "shoppers", "shoppers cut by their own deadline while a request was in flight"},
		func(f Figures) float64 { return float64(f.Timeouts) }},
	{Figure{"too_late", "shoppers", "shoppers refused at their deadline (410)"},
		func(f Figures) float64 { return float64(f.TooLate) }},
	{Figure{"gave_up_waiting", "shoppers", "shoppers who gave up after being asked to wait, or ran out of retries"},
		func(f Figures) float64 { return float64(f.GaveUpWaiting) }},
	{Figure{"declined", "shoppers", "shoppers whose payment was declined (402)"},
		func(f Figures) float64 { return float64(f.Declined) }},
	{Figure{"charged_after_leaving", "shoppers", "shoppers charged (approved, not voided) without seeing a confirmation, whatever else they were told: the model's figure, not the invariant of that name, which does not count a shopper told pending who holds the order its charge made"},
		func(f Figures) float64 { return float64(f.ChargedAfterLeaving) }},
	{Figure{"success_p95_ms", "ms", "p95 of the time of the requests that answered confirmed"},
		func(f Figures) float64 { return f.SuccessP95MS }},
	{Figure{"purchase_median_ms", "ms", "median time of a purchase, from the first attempt to the confirmation"},
		func(f Figures) float64 { return f.PurchaseMedianMS }},
	{Figure{"turned_away_p95_ms", "ms", "p95 of how long a shopper turned away (too late, gave up, timed out) was kept before it knew: from its first attempt to a final no, or to leaving"},
		func(f Figures) float64 { return f.TurnedAwayP95MS }},
	{Figure{"max_in_progress", "checkouts", "the most checkouts in progress at once"},
		func(f Figures) float64 { return float64(f.MaxInProgress) }},
	{Figure{"waiting_room_answers", "answers", "503 answers from the waiting room"},
		func(f Figures) float64 { return float64(f.WaitingRoomAnswers) }},
	{Figure{"fairness_rank_correlation", "rho", "Spearman correlation of arrival order and purchase order among buyers (1: first come, first served)"},
		func(f Figures) float64 { return f.FairnessRankCorrelation }},
	{Figure{"early_half_bought", "share", "share of the earliest-arriving half of the started shoppers that bought"},
		func(f Figures) float64 { return f.EarlyHalfBought }},
	{Figure{"wait_p95_ms", "ms", "p95 of how long a started shopper was kept before an answer it could act on, or leaving"},
		func(f Figures) float64 { return f.WaitP95MS }},
	{Figure{"oversold", "units", "units sold beyond the stock"},
		func(f Figures) float64 { return float64(f.Oversold) }},
}

// Names lists every figure, in the order tables show them. The caller may
// change the returned slice.
func Names() []Figure {
	out := make([]Figure, len(figures))
	for i, f := range figures {
		out[i] = f.Figure
	}
	return out
}

// Value returns the figure named key (a Key of [Names]) as a number, or
// NaN for a key that names no figure.
func (f Figures) Value(key string) float64 {
	for _, fig := range figures {
		if fig.Key == key {
			return fig.get(f)
		}
	}
	return math.NaN()
}
