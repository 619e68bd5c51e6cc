package explore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Strategies are how a search draws its trials: random, every trial drawn
// blind from the seed; guided, each drawn from the seed and what the
// trials before it showed (Guide).
const (
	StrategyRandom = "random"
	StrategyGuided = "guided"
)

// Guide is a guided search's memory, built only from what trials showed
// (Observed): the kinds of request each dependency was seen to receive,
// by phase, which request-aware faults are aimed at; every feature of
// behaviour seen so far; and the corpus, the schedules whose trial showed
// a feature no trial before it had. The next trial mutates a schedule of
// the corpus or is drawn afresh, aimed where kinds are known, half and
// half by the seed: the search stays deterministic for a seed and the
// same answers, and keeps swarm testing's breadth.
type Guide struct {
	kinds  map[string]map[string][]string
	seen   map[string]bool
	corpus []Schedule
	// near are the places in corpus of the schedules whose trial moved
	// the books without breaking them (Observed.NearMiss: orders told
	// failed within an allowance, stranded units allowed): near misses,
	// which a mutation starts from half the time.
	near []int
}

// NewGuide is a guide that has seen nothing.
func NewGuide() *Guide {
	return &Guide{kinds: map[string]map[string][]string{}, seen: map[string]bool{}}
}

// guidedStream keeps a guided search's draws apart from a random one's.
const guidedStream = 0x9e3779b97f4a7c15

// Learn takes in what trial s showed: kinds seen join what aimed faults
// may aim at; a feature of behaviour not seen before puts s in the corpus.
// It reports the features that were new.
func (g *Guide) Learn(s Schedule, o Observed) []string {
	for dep, byPhase := range o.Kinds {
		if g.kinds[dep] == nil {
			g.kinds[dep] = map[string][]string{}
		}
		for ph, ks := range byPhase {
			for _, k := range ks {
				if !slices.Contains(g.kinds[dep][ph], k) {
					g.kinds[dep][ph] = append(g.kinds[dep][ph], k)
				}
			}
			slices.Sort(g.kinds[dep][ph])
		}
	}
	var fresh []string
	for _, f := range o.Signature {
		if !g.seen[f] {
			g.seen[f] = true
			fresh = append(fresh, f)
		}
	}
	if len(fresh) > 0 && len(s.Faults) > 0 {
		if o.NearMiss {
			g.near = append(g.near, len(g.corpus))
		}
		g.corpus = append(g.corpus, s.clone())
	}
	return fresh
}

// Corpus is how many schedules the corpus holds.
func (g *Guide) Corpus() int { return len(g.corpus) }

// Next is trial number trial of a guided search with seed: from a
// generator seeded by the two, as Draw's, the trial either mutates a
// schedule of the corpus (when it has one, with even odds) or is drawn
// afresh as Draw draws, its request-aware faults aimed (aim).
func (g *Guide) Next(sp Space, seed uint64, trial int) Schedule {
	r := rand.New(rand.NewPCG(seed^guidedStream, uint64(trial)))
	if len(g.corpus) > 0 && r.IntN(2) == 0 {
		parent := g.corpus[r.IntN(len(g.corpus))]
		if len(g.near) > 0 && r.IntN(2) == 0 {
			parent = g.corpus[g.near[r.IntN(len(g.near))]]
		}
		return g.mutate(sp, r, parent, trial)
	}
	return sp.drawWith(r, trial, g.aim)
}

// aim aims request-aware fault f, three times in four, at a kind of
// request its dependency was seen to receive in its phase (in any phase,
// when none was seen in it): an HTTP family at an HTTP request's kind,
// lost_reply at any kind but a connection's opening and closing. A fault
// whose dependency was seen to receive none stays unaimed.
func (g *Guide) aim(r *rand.Rand, f *Fault) {
	fam, _ := FamilyByName(f.Family)
	if !fam.RequestAware {
		return
	}
	kinds := g.aimable(f.Target, f.Phase, fam.HTTP())
	if len(kinds) == 0 {
		return
	}
	if r.IntN(4) < 3 {
		f.Kind = pickKind(r, kinds)
	}
}

// pickKind draws one of kinds, a kind that changes state (Writes) three
// times as likely as one that reads: the books break through what is
// written, and a lost answer to a read changes nothing they hold.
func pickKind(r *rand.Rand, kinds []string) string {
	total := 0
	for _, k := range kinds {
		total += kindWeight(k)
	}
	n := r.IntN(total)
	for _, k := range kinds {
		if n -= kindWeight(k); n < 0 {
			return k
		}
	}
	return kinds[len(kinds)-1]
}

func kindWeight(k string) int {
	if Writes(k) {
		return 3
	}
	return 1
}

// Writes reports whether requests of kind k change state: a statement
// that writes or ends a transaction (INSERT, UPDATE, DELETE, REPLACE,
// COMMIT, EXECUTE of a prepared one), a Redis command that writes or runs
// a script, an HTTP request by POST, PUT, PATCH or DELETE.
func Writes(k string) bool {
	verb, _, _ := strings.Cut(k, " ")
	switch verb {
	case "INSERT", "UPDATE", "DELETE", "REPLACE", "COMMIT", "EXECUTE", "MERGE", "CALL",
		"POST", "PUT", "PATCH",
		"EVAL", "EVALSHA", "FCALL", "SET", "SETNX", "SETEX", "GETDEL", "GETSET", "DEL", "UNLINK", "INCR", "INCRBY", "DECR", "DECRBY",
		"HSET", "HINCRBY", "HDEL", "LPUSH", "RPUSH", "LPOP", "RPOP", "SADD", "SREM", "ZADD", "ZREM", "ZINCRBY", "XADD", "EXPIRE", "PEXPIRE", "EXEC", "MULTI":
		return true
	}
	return false
}

// aimable are the kinds a request-aware fault on target may be aimed at
// in phase, sorted.
func (g *Guide) aimable(target, phase string, http bool) []string {
	ok := func(k string) bool {
		switch k {
		case "connect", "close", "other":
			return false
		}
		return !http || strings.Contains(k, " /")
	}
	ks := slices.DeleteFunc(slices.Clone(g.kinds[target][phase]), func(k string) bool { return !ok(k) })
	if len(ks) > 0 {
		return ks
	}
	for _, byPhase := range g.kinds[target] {
		for _, k := range byPhase {
			if ok(k) && !slices.Contains(ks, k) {
				ks = append(ks, k)
			}
		}
	}
	slices.Sort(ks)
	return ks
}

// mutate makes trial number trial from parent, a schedule of the corpus:
// one or two of moving a fault's onset to another phase, changing its
// family (to one of parent's turned on that can act on its dependency),
// aiming it at another kind of request (or at none), softening or
// hardening it, adding a fault, dropping one. From says which were done.
func (g *Guide) mutate(sp Space, r *rand.Rand, parent Schedule, trial int) Schedule {
	s := parent.clone()
	s.Trial, s.Rate, s.Length, s.Load = trial, 1, 1, sp.Load
	for i := range s.Faults {
		s.Faults[i].Drawn, s.Faults[i].hit = 0, nil
	}
	var did []string
	for range 1 + r.IntN(2) {
		if what := g.mutateOnce(sp, r, &s); what != "" {
			did = append(did, what)
		}
	}
	// A mutation may have made two faults clash: the later goes.
	var kept []Fault
	for _, f := range s.Faults {
		if !slices.ContainsFunc(kept, func(g Fault) bool { return clash(f, g) }) {
			kept = append(kept, f)
		}
	}
	s.Faults = kept
	if len(did) == 0 {
		did = []string{"as it was"}
	}
	s.From = fmt.Sprintf("trial %d: %s", parent.Trial, strings.Join(did, "; "))
	return s
}

// mutateOnce changes s in one way, drawn from r, and says how ("" when
// the way drawn could not be done).
func (g *Guide) mutateOnce(sp Space, r *rand.Rand, s *Schedule) string {
	if len(s.Faults) == 0 {
		return ""
	}
	i := r.IntN(len(s.Faults))
	// Half the time, a request-aware fault, when there is one: the
	// faults whose aim a mutation can change.
	var acted []int
	for j, f := range s.Faults {
		if fam, _ := FamilyByName(f.Family); fam.RequestAware {
			acted = append(acted, j)
		}
	}
	if len(acted) > 0 && r.IntN(2) == 0 {
		i = acted[r.IntN(len(acted))]
	}
	f := &s.Faults[i]
	switch r.IntN(6) {
	case 0: // onset
		ph := sp.Phases[r.IntN(len(sp.Phases))]
		at := ph.From + time.Duration(r.Int64N(int64(ph.To-ph.From)+1))
		f.At = min(at.Round(quantum), sp.Load-quantum)
		f.For = max(min(f.For, sp.Load-f.At), quantum)
		f.Phase = ph.Name
		return fmt.Sprintf("fault %d moved to %s", i, ph.Name)
	case 1: // family
		var can []string
		for _, fam := range sp.Families {
			if fam != f.Family && slices.Contains(sp.TargetsOf(fam), f.Target) {
				can = append(can, fam)
			}
		}
		if len(can) == 0 {
			return ""
		}
		f.Family, f.Kind = can[r.IntN(len(can))], ""
		g.aim(r, f)
		if !slices.Contains(s.Families, f.Family) {
			s.Families = append(s.Families, f.Family)
		}
		return fmt.Sprintf("fault %d made %s", i, f.Family)
	case 2: // aimed kind
		fam, _ := FamilyByName(f.Family)
		if !fam.RequestAware {
			return ""
		}
		kinds := g.aimable(f.Target, f.Phase, fam.HTTP())
		k := "" // unaimed, one time in five
		if len(kinds) > 0 && r.IntN(5) > 0 {
			k = pickKind(r, kinds)
		}
		if k == f.Kind {
			return ""
		}
		f.Kind = k
		if k == "" {
			return fmt.Sprintf("fault %d aimed at every request", i)
		}
		return fmt.Sprintf("fault %d aimed at %s", i, k)
	case 3: // intensity
		in := intensities[r.IntN(len(intensities))]
		if fam, _ := FamilyByName(f.Family); !fam.intense() || in == f.Intensity {
			return ""
		}
		f.Intensity = in
		return fmt.Sprintf("fault %d at intensity %g", i, in)
	case 4: // add
		if len(s.Faults) >= max(sp.MaxFaults, 1) {
			return ""
		}
		if !s.add(sp.drawFault(r, sp.Families, g.aim)) {
			return ""
		}
		nf := s.Faults[len(s.Faults)-1]
		if !slices.Contains(s.Families, nf.Family) {
			s.Families = append(s.Families, nf.Family)
		}
		return fmt.Sprintf("added %s on %s %s", nf.Family, nf.Target, nf.Phase)
	default: // drop
		if len(s.Faults) < 2 {
			return ""
		}
		s.Faults = slices.Delete(s.Faults, i, i+1)
		return fmt.Sprintf("fault %d dropped", i)
	}
}

// Median is the median of counts (the mean of the middle two for an even
// number); 0 for none.
func Median(counts []int) float64 {
	if len(counts) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(counts))
	n := len(s)
	if n%2 == 1 {
		return float64(s[n/2])
	}
	return float64(s[n/2-1]+s[n/2]) / 2
}
