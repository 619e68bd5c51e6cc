package judge

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/internal/stats"
	"github.com/gameday-dev/gameday/scenarios"
)

// only returns the shoppers sel takes: of the journeys it names (the
// purchases when it names none), of the shops it names (every shop when
// it names none).
func only(shoppers []Shopper, sel scenarios.Select, shops []scenarios.Shop) []Shopper {
	set := sel.ShopSet(shops)
	journeys := map[string]bool{"": len(sel.Journeys) == 0}
	for _, j := range sel.Journeys {
		if j == scenarios.PurchaseJourney {
			j = ""
		}
		journeys[j] = true
	}
	out := make([]Shopper, 0, len(shoppers))
	for _, s := range shoppers {
		if journeys[s.Journey] && (set == nil || set[s.Shop]) {
			out = append(out, s)
		}
	}
	return out
}

// purchasesOf is the purchases among shoppers, without the visits.
func purchasesOf(shoppers []Shopper) []Shopper {
	if !slices.ContainsFunc(shoppers, func(s Shopper) bool { return s.Journey != "" }) {
		return shoppers
	}
	out := make([]Shopper, 0, len(shoppers))
	for _, s := range shoppers {
		if s.Journey == "" {
			out = append(out, s)
		}
	}
	return out
}

// selectWords names a selection in a promise: " of shops a, b on pod-2".
func selectWords(sel scenarios.Select) string {
	var parts []string
	if len(sel.Shops) > 0 {
		parts = append(parts, "of "+plural(len(sel.Shops), "shop")+" "+strings.Join(sel.Shops, ", "))
	}
	if len(sel.Pods) > 0 {
		parts = append(parts, "on "+strings.Join(sel.Pods, ", "))
	}
	if len(sel.Journeys) > 0 {
		parts = append(parts, "in "+plural(len(sel.Journeys), "journey")+" "+strings.Join(sel.Journeys, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, " and ")
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// span is a part of the run: a named window, or from-to when to is set.
type span struct {
	name     scenarios.Window
	from, to time.Duration
}

func (sp span) contains(w Windows, t time.Duration) bool {
	if sp.to > 0 {
		return t >= sp.from && t < sp.to
	}
	return w.Contains(sp.name, t)
}

func (sp span) words() string {
	if sp.to > 0 {
		return fmt.Sprintf("from %s to %s", sp.from, sp.to)
	}
	return WindowWords(sp.name)
}

// confirmedIn is, of the shoppers arriving in sp, how many ended and how
// many were confirmed (a visit: ok), and how long each confirmed purchase
// took from the shopper's arrival, retries included; of the visits, how
// long each page answered in sp took (their think times are the
// visitor's, not the system's).
func confirmedIn(shoppers []Shopper, w Windows, sp span) (n, confirmed int, lat []time.Duration) {
	for _, s := range shoppers {
		if s.Journey != "" {
			// A visit's pages are timed when they were asked for: a
			// visit that arrived just before the part judged reads its
			// later pages in it.
			for _, a := range s.Attempts {
				if a.Status != "" && sp.contains(w, a.At) {
					lat = append(lat, a.Latency)
				}
			}
		}
		if s.Outcome == "" || s.Outcome == Dropped || !sp.contains(w, s.Scheduled) {
			continue
		}
		n++
		// A visit's success is ok, a purchase's confirmed.
		done := Confirmed
		if s.Journey != "" {
			done = OK
		}
		if s.Outcome != done {
			continue
		}
		confirmed++
		if s.Journey != "" {
			continue
		}
		// From arrival to the confirmed answer: a shopper refused, who
		// came back and bought, was slowed by what refused it.
		for i, a := range s.Attempts {
			if a.Status == string(done) {
				if i == 0 {
					lat = append(lat, a.Latency) // from the scheduled start already
				} else {
					lat = append(lat, a.At+a.Latency-s.Scheduled)
				}
			}
		}
	}
	return n, confirmed, lat
}

// blastRadiusExpectation compares the selected shoppers' confirmed share
// (and p95) in the judged part of the run with the baseline's.
func blastRadiusExpectation(b *scenarios.BlastRadius, shoppers []Shopper, w Windows) ExpectationResult {
	win, base := span{}, span{}
	win.name, win.from, win.to = b.Span()
	base.name, base.from, base.to = b.BaselineSpan()
	who, what, p95, did := "shoppers", "confirmations", "confirmed p95", "confirmed"
	if len(b.Journeys) > 0 && !slices.Contains(b.Journeys, scenarios.PurchaseJourney) {
		who, what, p95, did = "visitors", "successes (ok)", "pages' p95", "ok"
	} else if len(b.Journeys) > 0 {
		what, p95, did = "confirmations and successes (ok)", "p95", "confirmed or ok"
	}
	promise := fmt.Sprintf("%s%s keep at least %g%% of their %s %s", who, selectWords(b.Select), b.ConfirmedAtLeast*100, what, win.words())
	if b.P95Within != nil {
		promise += fmt.Sprintf(", and their %s within %g%%", p95, *b.P95Within*100)
		if b.P95Slack > 0 {
			promise += fmt.Sprintf(" (+%s)", b.P95Slack.D())
		}
	}
	promise += ", against " + base.words()
	r := ExpectationResult{Window: string(win.name), Promise: promise}
	bn, bc, blat := confirmedIn(shoppers, w, base)
	wn, wc, wlat := confirmedIn(shoppers, w, win)
	switch {
	case bn == 0 || bc == 0:
		// A baseline before the fault is the steady state: without it
		// the drill proves nothing either way (judge.Decide:
		// inconclusive). A baseline named by time is a promise like any.
		if base.to == 0 && base.name == scenarios.WindowBefore {
			r.Window = string(scenarios.WindowBefore)
		}
		r.Observed = fmt.Sprintf("no confirmation in the baseline (%d of %d %s %s): nothing to compare with", bc, bn, who, did)
		return r
	case wn == 0:
		r.Observed = "no " + who + " in the window judged"
		return r
	}
	bRatio, wRatio := float64(bc)/float64(bn), float64(wc)/float64(wn)
	kept := wRatio / bRatio
	r.Held = kept >= b.ConfirmedAtLeast
	r.Observed = fmt.Sprintf("%.1f%% of the baseline's %s kept (%d of %d %s, against %d of %d)", kept*100, what, wc, wn, did, bc, bn)
	if b.P95Within != nil {
		bp := stats.PercentileOf(blat, 95)
		bound := time.Duration(float64(bp)*(1+*b.P95Within)) + b.P95Slack.D()
		if len(wlat) == 0 {
			r.Held = false
			r.Observed += "; no " + did + " answer to take a p95 of"
			return r
		}
		wp := stats.PercentileOf(wlat, 95)
		r.Held = r.Held && wp <= bound
		r.Observed += fmt.Sprintf("; %s %s against %s (bound %s)", p95, wp.Round(100*time.Microsecond), bp.Round(100*time.Microsecond), bound.Round(100*time.Microsecond))
	}
	return r
}

// Move is a move of a shop between pods, as the run recorded it.
type Move = runrecord.Move

// movedExpectation checks how a move ended and how long its shop was
// read-only.
func movedExpectation(p *scenarios.Moved, moves map[string]Move) ExpectationResult {
	promise := fmt.Sprintf("move %s ends %s", p.Move, strings.Join(p.Outcomes, " or "))
	if p.ReadOnlyBelow > 0 {
		promise += fmt.Sprintf(", its shop read-only for less than %s", p.ReadOnlyBelow.D())
	}
	r := ExpectationResult{Promise: promise}
	m, ok := moves[p.Move]
	if !ok || m.Outcome == "" {
		r.Observed = "the move never began"
		return r
	}
	ro := time.Duration(m.ReadOnlyMS * float64(time.Millisecond))
	r.Held = slices.Contains(p.Outcomes, m.Outcome) && (p.ReadOnlyBelow == 0 || ro < p.ReadOnlyBelow.D())
	r.Observed = fmt.Sprintf("%s: %d units from %s to %s, read-only %s", strings.ReplaceAll(m.Outcome, "_", " "), m.Units, m.From, m.To, ro.Round(time.Millisecond))
	if m.Error != "" {
		r.Observed += " (" + m.Error + ")"
	}
	return r
}
