// Package flash computes the figures of a flash sale from its shoppers'
// records: how many bought, timed out, were refused at their deadline or
// gave up after being asked to wait, how long a purchase took, and how fair
// the order of purchases was to the order of arrivals.
//
// The figures are computed in one place, from per-shopper records, so that
// the runner (from what the load generator saw) and the predictor (from what
// its simulation saw) cannot define them differently.
package flash

import (
	"github.com/gameday-dev/gameday/internal/stats"
	"math"
	"slices"
	"time"

	"github.com/gameday-dev/gameday/gameday/load"
)

// Shopper is what the figures need of one arrival. Times are offsets from
// the start of the sale.
type Shopper struct {
	Index int // arrival order, from 0
	// Scheduled is the planned arrival; Started the first attempt; Finished
	// when the outcome was reached.
	Scheduled, Started, Finished time.Duration
	// Outcome is one of gameday/load's Outcome constants; "" for an arrival
	// the run never reached (aborted), which no figure counts.
	Outcome  string
	Attempts []Attempt
	// Charged: an approved charge that was not voided exists for this
	// shopper (from the provider's books, or the simulation's).
	Charged bool
}

// Attempt is one request of a shopper.
type Attempt struct {
	At, Took time.Duration // sent at, and how long until the answer or the cut
	Code     int           // HTTP status; 0 when there was no answer
	Status   string        // the answer's status field ("confirmed", "unavailable", ...)
	Reason   string        // the answer's reason field ("waiting_room", "deadline", ...)
	Err      bool          // no answer: the shopper cut the request, or the transport failed
}

// ReasonWaitingRoom is the reason of a 503 from the checkout's waiting
// room (the admission modes lottery, fair and fair-deadline).
const ReasonWaitingRoom = "waiting_room"

// statusConfirmed is the status of an answer that sold, whatever its HTTP
// code (a described system may confirm with a 201).
const statusConfirmed = "confirmed"

// Figures are the flash-sale figures of one run (measured or simulated).
// The JSON names are the keys of [Names].
type Figures struct {
	Shoppers            int `json:"shoppers"`
	Confirmed           int `json:"confirmed"`
	Timeouts            int `json:"timeouts"`
	TooLate             int `json:"too_late"`
	GaveUpWaiting       int `json:"gave_up_waiting"`
	Declined            int `json:"declined"`
	ChargedAfterLeaving int `json:"charged_after_leaving"`

	SuccessP95MS     float64 `json:"success_p95_ms"`
	PurchaseMedianMS float64 `json:"purchase_median_ms"`
	TurnedAwayP95MS  float64 `json:"turned_away_p95_ms"`

	MaxInProgress      int `json:"max_in_progress"`
	WaitingRoomAnswers int `json:"waiting_room_answers"`

	FairnessRankCorrelation float64 `json:"fairness_rank_correlation"`
	EarlyHalfBought         float64 `json:"early_half_bought"`
	WaitP95MS               float64 `json:"wait_p95_ms"`

	Oversold int `json:"oversold"`
}

// Compute derives the figures from the shoppers' records. maxInProgress and
// oversold are not in the records (the checkout, or the simulation, counts
// them) and are copied in. Percentiles are nearest-rank, as everywhere in
// gameday; the median is the 50th percentile, so with an even count it is
// the lower of the two middle values. The records are not changed.
func Compute(shoppers []Shopper, maxInProgress int, oversold int) Figures {
	f := Figures{MaxInProgress: maxInProgress, Oversold: oversold}
	// Sized for the most there can be, so that none grows (the predictor
	// calls Compute for every simulated run).
	n := len(shoppers)
	var (
		success  = make([]time.Duration, 0, n) // Took of the confirming attempts
		purchase = make([]time.Duration, 0, n) // Finished - Started of buyers
		away     = make([]time.Duration, 0, n) // Finished - Started of shoppers turned away
		wait     = make([]time.Duration, 0, n) // Finished - Started of started shoppers
		started  = make([]int, 0, n)           // indexes into shoppers, of started shoppers
		buyers   = make([]int, 0, n)           // indexes into shoppers, of buyers
	)
	for i := range shoppers {
		s := &shoppers[i]
		if s.Outcome == "" {
			continue // never reached: the run was aborted
		}
		f.Shoppers++
		for _, a := range s.Attempts {
			if a.Code == 503 && a.Reason == ReasonWaitingRoom {
				f.WaitingRoomAnswers++
			}
			if a.Status == statusConfirmed {
				success = append(success, a.Took)
			}
		}
		if s.Outcome != load.OutcomeDropped {
			started = append(started, i)
			wait = append(wait, s.Finished-s.Started)
		}
		if s.Charged && s.Outcome != load.OutcomeConfirmed {
			f.ChargedAfterLeaving++
		}
		switch s.Outcome {
		case load.OutcomeTooLate, load.OutcomeUnavailable, load.OutcomeGaveUp:
			away = append(away, s.Finished-s.Started)
		}
		switch s.Outcome {
		case load.OutcomeConfirmed:
			f.Confirmed++
			buyers = append(buyers, i)
			purchase = append(purchase, s.Finished-s.Started)
		case load.OutcomeDeclined:
			f.Declined++
		case load.OutcomeTooLate:
			f.TooLate++
		case load.OutcomeUnavailable:
			f.GaveUpWaiting++
		case load.OutcomeGaveUp:
			// A shopper whose last request was cut (no answer) left with a
			// request in flight: a timeout. Any other gave_up left between
			// attempts, having been asked to wait.
			if n := len(s.Attempts); n > 0 && s.Attempts[n-1].Err {
				f.Timeouts++
			} else {
				f.GaveUpWaiting++
			}
		}
	}
	f.SuccessP95MS = stats.MS(percentile(success, 95))
	f.PurchaseMedianMS = stats.MS(percentile(purchase, 50))
	f.TurnedAwayP95MS = stats.MS(percentile(away, 95))
	f.WaitP95MS = stats.MS(percentile(wait, 95))
	f.FairnessRankCorrelation = fairness(shoppers, buyers)
	f.EarlyHalfBought = earlyHalf(shoppers, started)
	return f
}

// fairness is Spearman's rank correlation between arrival order and
// purchase order among the buyers: 1 when they bought in the order they
// arrived, near 0 when the order of purchase is unrelated to it, and 0 when
// it is undefined (fewer than two buyers, or all bought at the same
// instant). Ties get the average of their ranks.
func fairness(shoppers []Shopper, buyers []int) float64 {
	n := len(buyers)
	if n < 2 {
		return 0
	}
	arrival := make([]float64, n)
	bought := make([]float64, n)
	for k, i := range buyers {
		arrival[k] = float64(shoppers[i].Index)
		bought[k] = float64(shoppers[i].Finished)
	}
	return pearson(ranks(arrival), ranks(bought))
}

// ranks replaces each value by its rank from 1, ties by the mean of the
// ranks they span.
func ranks(v []float64) []float64 {
	order := make([]int, len(v))
	for i := range order {
		order[i] = i
	}
	byValue := func(a, b int) int {
		switch {
		case v[a] < v[b]:
			return -1
		case v[a] > v[b]:
			return 1
		}
		return 0
	}
	// Arrival order is usually given sorted: no need to sort it again.
	if !slices.IsSortedFunc(order, byValue) {
		slices.SortStableFunc(order, byValue)
	}
	r := make([]float64, len(v))
	for lo := 0; lo < len(order); {
		hi := lo + 1
		for hi < len(order) && v[order[hi]] == v[order[lo]] {
			hi++
		}
		mean := float64(lo+hi+1) / 2 // ranks lo+1 .. hi
		for _, i := range order[lo:hi] {
			r[i] = mean
		}
		lo = hi
	}
	return r
}

// pearson is the correlation of x and y, 0 when either does not vary.
func pearson(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// earlyHalf is the share of the earliest-arriving half of the started
// shoppers that bought. With an odd count the middle shopper belongs to
// the early half (ceil(n/2) shoppers), so that one started shopper is a
// half of one. 0 when nobody started.
func earlyHalf(shoppers []Shopper, started []int) float64 {
	if len(started) == 0 {
		return 0
	}
	byArrival := func(a, b int) int {
		sa, sb := &shoppers[a], &shoppers[b]
		if c := cmpDuration(sa.Scheduled, sb.Scheduled); c != 0 {
			return c
		}
		return sa.Index - sb.Index
	}
	// Records usually come in arrival order: sort only when they do not.
	order := started
	if !slices.IsSortedFunc(order, byArrival) {
		order = slices.Clone(started)
		slices.SortFunc(order, byArrival)
	}
	half := order[:(len(order)+1)/2]
	bought := 0
	for _, i := range half {
		if shoppers[i].Outcome == load.OutcomeConfirmed {
			bought++
		}
	}
	return float64(bought) / float64(len(half))
}

func cmpDuration(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// percentile is the nearest-rank p-th percentile (p in (0, 100]); it sorts
// ds in place (the predictor computes the figures of every simulated run,
// and a copy each time would be its largest allocation). 0 for no values.
func percentile(ds []time.Duration, p float64) time.Duration {
	slices.Sort(ds)
	return stats.Percentile(ds, p)
}
