package explore

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// Space is what a search draws from: the system's dependencies a fault
// can act on, the fault families allowed, the sale's phases, and at most
// how many faults a trial has.
type Space struct {
	Targets   []string
	Families  []string
	Phases    []Phase
	MaxFaults int
	// Load is the length of a trial's load: faults begin and end in it.
	Load time.Duration
	// On are, for a family listed, the only targets its faults are drawn
	// on, in order; a family not listed is drawn on every target. A
	// process family is listed with the targets whose process handle can
	// carry it out, an HTTP family with those that speak plain HTTP (or do
	// not say), a cache family with those that speak Redis (and, for one
	// that clears keys, hold no books); every process and cache family of
	// Families must be listed.
	On map[string][]string
}

// check says what the space lacks to draw from.
func (sp Space) check() error {
	if len(sp.Targets) == 0 || len(sp.Families) == 0 || len(sp.Phases) == 0 {
		return fmt.Errorf("nothing to draw: %d dependencies, %d families, %d phases", len(sp.Targets), len(sp.Families), len(sp.Phases))
	}
	for _, f := range sp.Families {
		fam, ok := FamilyByName(f)
		if !ok {
			return fmt.Errorf("no fault family %q", f)
		}
		on, listed := sp.On[f]
		switch {
		case fam.Process && len(on) == 0:
			return fmt.Errorf("family %s: no dependency's process handle can carry it out", f)
		case fam.Cache != nil && len(on) == 0:
			return fmt.Errorf("family %s: no dependency speaks Redis", f)
		case listed && len(on) == 0:
			return fmt.Errorf("family %s: drawn on no dependency", f)
		}
		for _, t := range on {
			if !slices.Contains(sp.Targets, t) {
				return fmt.Errorf("family %s: drawn on %s, which is not a target", f, t)
			}
		}
	}
	return nil
}

// TargetsOf are the targets a fault of family f may be drawn on.
func (sp Space) TargetsOf(f string) []string {
	if on, ok := sp.On[f]; ok {
		return on
	}
	return sp.Targets
}

// Fault is one fault of a schedule.
type Fault struct {
	Target string `json:"target"`
	Family string `json:"family"`
	Phase  string `json:"phase"`
	// At is when it begins, For how long it lasts, both from the start
	// of the load, rounded to the 10 ms.
	At  time.Duration `json:"at_ns"`
	For time.Duration `json:"for_ns"`
	// Intensity in (0, 1] sets its attributes (Family).
	Intensity float64 `json:"intensity"`
	// Kind, for a request-aware fault, is the one kind of request it
	// acts on ("COMMIT", "POST /v1/charges"): an aimed fault, drawn by a
	// guided search at a kind the dependency was seen to receive. ""
	// acts on every request.
	Kind string `json:"kind,omitempty"`
	// hit are the kinds of request the fault acted on in the trial that
	// ran it, the most first: what shrinking may narrow an unaimed fault
	// to. Not logged.
	hit []string
	// Drawn is the fault's place in the schedule drawn, counted from 1:
	// its identity, which its name in a scenario (f0, f1, …), and so a
	// request-aware toxic's default seed, follows through shrinking. 0 is
	// its place in Faults: Draw leaves it so, and the log stays what it
	// was; Shrink numbers the faults before it drops any.
	Drawn int `json:"drawn,omitempty"`
}

// Schedule is one trial: its faults and the share of the base scenario's
// load it runs (both 1 unless a shrink lowered them).
type Schedule struct {
	Trial int `json:"trial"`
	// Families are the families this trial had turned on (swarm testing:
	// each trial a random subset, rather than every family a little).
	Families []string `json:"families"`
	Faults   []Fault  `json:"faults"`
	// Rate scales every arrival rate; Length the load's stages. 1 is the
	// base scenario's.
	Rate   float64 `json:"rate"`
	Length float64 `json:"length"`
	// Load is the base scenario's load, which Length scales.
	Load time.Duration `json:"load_ns"`
	// From says, for a schedule a guided search made from one of its
	// corpus, which trial's and how ("trial 3: fault 1 moved to at the
	// peak"); "" for one drawn afresh.
	From string `json:"from,omitempty"`
}

// Encode is the schedule as the search's log holds it: one line of JSON.
// The same schedule always gives the same bytes.
func (s Schedule) Encode() []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // plain values only
	}
	return b
}

// quantum is what drawn times are rounded to, so that a schedule written
// out as a scenario (in milliseconds) is the schedule drawn.
const quantum = 10 * time.Millisecond

// Draw draws trial number trial of a search with seed: every draw comes
// from a generator seeded by the two (PCG), so the same seed draws the
// same schedules in the same order on any machine, and trial n is the
// same whatever the trials before it did. Swarm testing: each family of
// the space is turned on with even odds (at least one is), then 1 to
// MaxFaults faults are drawn, each of a family turned on, on a target
// (one of On's for the family, when it is listed), in a phase, with a
// length and an intensity (which a family without attributes ignores).
func (sp Space) Draw(seed uint64, trial int) Schedule {
	return sp.drawWith(rand.New(rand.NewPCG(seed, uint64(trial))), trial, nil)
}

// drawWith draws trial number trial from r as Draw says, each
// request-aware fault aimed by aim when it is given (a guided search).
func (sp Space) drawWith(r *rand.Rand, trial int, aim func(*rand.Rand, *Fault)) Schedule {
	s := Schedule{Trial: trial, Rate: 1, Length: 1, Load: sp.Load}
	for _, f := range sp.Families {
		if r.IntN(2) == 0 {
			s.Families = append(s.Families, f)
		}
	}
	if len(s.Families) == 0 {
		s.Families = []string{sp.Families[r.IntN(len(sp.Families))]}
	}
	n := 1 + r.IntN(max(sp.MaxFaults, 1))
	for range n {
		s.add(sp.drawFault(r, s.Families, aim))
	}
	return s
}

// intensities are the intensities a fault is drawn at.
var intensities = []float64{0.25, 0.5, 0.75, 1}

// drawFault draws one fault of one of families: a phase and a time in it,
// a length, a family, a target, an intensity, in that order from r. With
// aim (a guided search), a request-aware fault is then aimed, or not, by
// aim.
func (sp Space) drawFault(r *rand.Rand, families []string, aim func(*rand.Rand, *Fault)) Fault {
	ph := sp.Phases[r.IntN(len(sp.Phases))]
	at := ph.From + time.Duration(r.Int64N(int64(ph.To-ph.From)+1))
	at = min(at.Round(quantum), sp.Load-quantum)
	// From a tenth to half of the load, within it.
	d := time.Duration(float64(sp.Load) * (0.1 + 0.4*r.Float64())).Round(quantum)
	d = max(min(d, sp.Load-at), quantum)
	family := families[r.IntN(len(families))]
	targets := sp.TargetsOf(family)
	f := Fault{
		Family: family, Target: targets[r.IntN(len(targets))],
		Phase: ph.Name, At: at, For: d,
		Intensity: intensities[r.IntN(len(intensities))],
	}
	if aim != nil {
		aim(r, &f)
	}
	return f
}

// add adds f to the schedule unless it clashes with a fault there: two
// faults of one family on one dependency at once are one fault, harsher;
// two process faults on one process at once (a pause of a killed process)
// are no fault a drill can carry out. It reports whether f was added.
func (s *Schedule) add(f Fault) bool {
	if slices.ContainsFunc(s.Faults, func(g Fault) bool { return clash(f, g) }) {
		return false
	}
	s.Faults = append(s.Faults, f)
	return true
}

// clash reports whether faults a and b cannot both be in one schedule.
func clash(a, b Fault) bool {
	return a.Target == b.Target && overlaps(a, b) && (a.Family == b.Family || (isProcess(a.Family) && isProcess(b.Family)))
}

func overlaps(a, b Fault) bool { return a.At < b.At+b.For && b.At < a.At+a.For }

func isProcess(family string) bool {
	f, _ := FamilyByName(family)
	return f.Process
}

// number is fault i's place in the schedule drawn, counted from 0.
func (s Schedule) number(i int) int {
	if d := s.Faults[i].Drawn; d > 0 {
		return d - 1
	}
	return i
}

// numbered is s with each fault's place in it kept (Drawn) where none is
// yet: a schedule whose faults keep their identity when some are dropped.
func (s Schedule) numbered() Schedule {
	c := s.clone()
	for i := range c.Faults {
		c.Faults[i].Drawn = c.number(i) + 1
	}
	return c
}

// clone is a deep copy of s.
func (s Schedule) clone() Schedule {
	c := s
	c.Families = slices.Clone(s.Families)
	c.Faults = slices.Clone(s.Faults)
	return c
}
