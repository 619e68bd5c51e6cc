package admission

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// A first attempt in a room with a free place and nobody waiting is
// admitted at once, with a token; once the room is full, or someone is
// waiting ahead, or the free place is kept for a called shopper on its way
// back, a first attempt waits.
func TestFairFirstAttemptInAnEmptyRoom(t *testing.T) {
	c := newClock()
	r := newRoom(t, Config{Mode: ModeFair, InProgress: 2}, c)
	p := r.Admit("co-p", "")
	if !p.Admitted || p.Refusal != "" || p.Token == "" {
		t.Fatalf("first attempt in an empty room: %+v, want admitted with a token", p)
	}
	if s := r.Stats(); s.NowServing.UnixNano() != stampOf(t, r, p.Token, "co-p") || s.WaitingRoomAnswers != 0 || s.TokensIssued != 1 {
		t.Errorf("after the first admission: %+v, want T on its stamp and no waiting-room answer", s)
	}
	if d := r.Admit("co-q", ""); !d.Admitted {
		t.Fatalf("second first attempt, one place left: %+v", d)
	}
	w := firstToken(t, r, "co-w") // full: waits
	r.Done()                      // p answers: a place is free, but w was first
	c.Advance(time.Millisecond)
	firstToken(t, r, "co-z")

	// The tick calls w, and only w: the free place is kept for it, so a
	// newcomer waits although nobody is waiting uncalled ahead of it.
	r2 := newRoom(t, Config{Mode: ModeFair, InProgress: 2}, c)
	fill(t, r2, 2)
	w2 := firstToken(t, r2, "co-w")
	r2.Done()
	r2.Tick()
	if s := r2.Stats(); s.Called != 1 || s.Waiting != 0 || s.NowServing.UnixNano() != stampOf(t, r2, w2, "co-w") {
		t.Fatalf("tick with one free place: %+v, want w called", s)
	}
	firstToken(t, r2, "co-y")
	if !r2.Admit("co-w", w2).Admitted {
		t.Fatal("w, called, refused")
	}

	// A shopper admitted at once who comes back (its checkout answered
	// 503 and it retries) is admitted again: its stamp is at or before T.
	if d := r.Admit("co-p", p.Token); !d.Admitted {
		t.Errorf("p again: %+v", d)
	}
	// w is admitted in its turn, on the first tick with a place free.
	r.Done()
	r.Done()
	r.Tick()
	if d := r.Admit("co-w", w); !d.Admitted {
		t.Errorf("w after the tick: %+v", d)
	}
}

// A waiting shopper who stops coming back is presumed gone once it has not
// been seen for longer than GoneAfter: the threshold passes its stamp
// without calling it, and the place goes to the next shopper who is still
// there. If it comes back after all, its stamp is at or before T and it is
// admitted.
func TestFairSkipsShoppersPresumedGone(t *testing.T) {
	c := newClock()
	r := newRoom(t, Config{Mode: ModeFair, InProgress: 2}, c)
	gone := r.Config().GoneAfter
	fill(t, r, 2)
	b := firstToken(t, r, "co-b")
	a := firstToken(t, r, "co-a") // will stop retrying
	x := firstToken(t, r, "co-x")
	y := firstToken(t, r, "co-y")
	live := []struct{ id, token string }{{"co-b", b}, {"co-x", x}, {"co-y", y}}
	// b, x and y retry every GoneAfter; a does not. (The stamps are 1 ns
	// apart: a was last seen GoneAfter + 1 ns ago when the tick runs.)
	c.Advance(gone)
	for _, s := range live {
		if d := r.Admit(s.id, s.token); d.Refusal != RefusalWaitingRoom {
			t.Fatalf("%s retrying: %+v", s.id, d)
		}
	}
	c.Advance(2 * time.Nanosecond)
	r.Done()
	r.Done()
	r.Tick() // two places: b, then x; not a
	s := r.Stats()
	if s.NowServing.UnixNano() != stampOf(t, r, x, "co-x") || s.Called != 2 || s.Waiting != 1 {
		t.Fatalf("after the tick: %+v; want T on x's stamp, b and x called (not a), y waiting", s)
	}
	for _, s := range live[:2] {
		if d := r.Admit(s.id, s.token); !d.Admitted {
			t.Errorf("%s, called: %+v", s.id, d)
		}
	}
	if d := r.Admit("co-y", y); d.Admitted {
		t.Errorf("y admitted past its turn")
	}
	if s := r.Stats(); s.Called != 0 {
		t.Errorf("%d called after both came back", s.Called)
	}
	// a comes back: the threshold is the promise, even past N.
	if d := r.Admit("co-a", a); !d.Admitted {
		t.Errorf("a, presumed gone and back: %+v", d)
	}
	if s := r.Stats(); s.InProgress != 3 {
		t.Errorf("%d in progress, want b, x and a", s.InProgress)
	}
}

// A called shopper counts as on its way back until it has not been seen
// for GoneAfter, not a nanosecond longer; then the room calls the next
// one.
func TestFairCalledShopperStopsCountingAfterGoneAfter(t *testing.T) {
	c := newClock()
	r := newRoom(t, Config{Mode: ModeFair, InProgress: 1}, c)
	gone := r.Config().GoneAfter
	fill(t, r, 1)
	a := firstToken(t, r, "co-a") // called, never comes back
	c.Advance(time.Millisecond)
	b := firstToken(t, r, "co-b")
	r.Done()
	r.Tick()
	serving := func() int64 { return r.Stats().NowServing.UnixNano() }
	if serving() != stampOf(t, r, a, "co-a") || r.Stats().Called != 1 {
		t.Fatalf("first tick: %+v, want a called", r.Stats())
	}
	c.Advance(gone - time.Millisecond) // a last seen GoneAfter ago
	if d := r.Admit("co-b", b); d.Refusal != RefusalWaitingRoom {
		t.Fatalf("b retrying: %+v", d)
	}
	r.Tick()
	if serving() != stampOf(t, r, a, "co-a") {
		t.Fatalf("a presumed gone at exactly GoneAfter: T moved to %d", serving())
	}
	c.Advance(time.Nanosecond)
	r.Tick()
	if s := r.Stats(); serving() != stampOf(t, r, b, "co-b") || s.Called != 1 {
		t.Fatalf("GoneAfter + 1 ns: %+v, want a dropped and b called", s)
	}
	if d := r.Admit("co-a", a); !d.Admitted {
		t.Errorf("a, late: %+v", d)
	}
}

// The threshold only moves forward, and only onto stamps the room issued.
func TestFairThreshold(t *testing.T) {
	c := newClock()
	r := newRoom(t, Config{Mode: ModeFair, InProgress: 4}, c)
	r.Tick()
	if s := r.Stats(); !s.NowServing.IsZero() || s.Called != 0 {
		t.Fatalf("nothing issued, yet T = %v, called %d", s.NowServing, s.Called)
	}
	fill(t, r, 4)
	x := firstToken(t, r, "co-x")
	c.Advance(time.Millisecond)
	r.Tick()
	if s := r.Stats(); s.Called != 0 || s.Waiting != 1 {
		t.Fatalf("full room: %+v, want x waiting", s)
	}
	r.Done()
	r.Tick()
	if got, want := r.Stats().NowServing.UnixNano(), stampOf(t, r, x, "co-x"); got != want {
		t.Fatalf("T = %d, want x's stamp %d", got, want)
	}
	// Room for more, but no stamp to move onto: T stays.
	for range 3 {
		r.Done()
	}
	c.Advance(time.Minute)
	r.Tick()
	if got := r.Stats().NowServing.UnixNano(); got != stampOf(t, r, x, "co-x") {
		t.Fatalf("T moved to %d past the stamps issued", got)
	}

	// A random run: T never goes back and is always an issued stamp.
	rng := rand.New(rand.NewPCG(3, 4))
	issued := map[int64]bool{stampOf(t, r, x, "co-x"): true}
	type waiter struct{ id, token string }
	var waiting []waiter
	last := r.Stats().NowServing
	for i := range 2000 {
		switch rng.IntN(4) {
		case 0:
			id := fmt.Sprint("co-", i)
			d := r.Admit(id, "")
			issued[stampOf(t, r, d.Token, id)] = true
			if !d.Admitted {
				waiting = append(waiting, waiter{id, d.Token})
			}
		case 1:
			if len(waiting) == 0 {
				break
			}
			k := rng.IntN(len(waiting)) // a random waiting shopper retries
			if r.Admit(waiting[k].id, waiting[k].token).Admitted {
				waiting = slices.Delete(waiting, k, k+1)
			}
		case 2:
			r.Done()
		case 3:
			r.Tick()
		}
		c.Advance(time.Duration(rng.IntN(100)) * time.Millisecond)
		s := r.Stats()
		if s.NowServing.Before(last) || !issued[s.NowServing.UnixNano()] {
			t.Fatalf("step %d: T = %v after %v (issued: %v)", i, s.NowServing, last, issued[s.NowServing.UnixNano()])
		}
		last = s.NowServing
	}
}

// Shoppers who keep retrying are admitted in the order of their first
// attempt, whatever order their retries come in: no shopper is admitted
// in an earlier round than one who came before it. When every called
// shopper comes back at once, in progress is at most K.
func TestFairAdmitsInStampOrder(t *testing.T) {
	const n, shoppers = 3, 40
	c := newClock()
	r := newRoom(t, Config{Mode: ModeFair, InProgress: n}, c)
	tokens := map[string]string{}
	var order []string // by first attempt
	round := map[string]int{}
	var inProgress []string
	for i := range shoppers {
		id := fmt.Sprint("co-", i)
		d := r.Admit(id, "")
		tokens[id] = d.Token
		order = append(order, id)
		if d.Admitted { // the first n, in an empty room
			round[id] = -1
			inProgress = append(inProgress, id)
		}
		c.Advance(time.Millisecond)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for step := 0; len(round) < shoppers; step++ {
		if step > 10*shoppers {
			t.Fatalf("stuck after %d admitted", len(round))
		}
		r.Tick()
		// Everyone not admitted yet retries, in a random order.
		waiting := slices.DeleteFunc(slices.Clone(order), func(id string) bool { _, ok := round[id]; return ok })
		rng.Shuffle(len(waiting), func(i, j int) { waiting[i], waiting[j] = waiting[j], waiting[i] })
		for _, id := range waiting {
			d := r.Admit(id, tokens[id])
			switch {
			case d.Admitted:
				round[id] = step
				inProgress = append(inProgress, id)
			case d.Refusal != RefusalWaitingRoom || d.Token != tokens[id]:
				t.Fatalf("%s: %+v, want a waiting-room answer echoing its token", id, d)
			}
		}
		if s := r.Stats(); s.InProgress > s.Target {
			t.Fatalf("step %d: %d in progress, K %d", step, s.InProgress, s.Target)
		}
		// One or two of them answer.
		for k := 1 + rng.IntN(2); k > 0 && len(inProgress) > 0; k-- {
			r.Done()
			inProgress = inProgress[1:]
		}
		c.Advance(50 * time.Millisecond)
	}
	for i := 1; i < shoppers; i++ {
		if round[order[i]] < round[order[i-1]] {
			t.Errorf("%s admitted in round %d, before %s (round %d) who came first", order[i], round[order[i]], order[i-1], round[order[i-1]])
		}
	}
}

// Issued stamps older than TokenTTL are forgotten: T moves past them and
// the room's memory empties.
func TestFairForgetsExpiredStamps(t *testing.T) {
	c := newClock()
	// GoneAfter longer than the TTL, so that it is the expiry that drops
	// the stamps here.
	r := newRoom(t, Config{Mode: ModeFair, InProgress: 1, TokenTTL: time.Minute, GoneAfter: time.Hour}, c)
	fill(t, r, 1)
	var tokens []string
	for i := range 100 {
		tokens = append(tokens, firstToken(t, r, fmt.Sprint("co-", i)))
	}
	r.Done()
	r.Tick()
	if s := r.Stats(); s.Waiting != 99 || s.Called != 1 {
		t.Fatalf("%+v, want 99 waiting, 1 called", s)
	}
	c.Advance(time.Minute + time.Microsecond) // the 100 stamps are 1 ns apart
	r.Tick()
	s := r.Stats()
	if s.Waiting != 0 || s.Called != 0 || len(r.fair.waiting) != 0 || len(r.fair.called) != 0 {
		t.Errorf("after the ttl: %+v, %d + %d entries kept", s, len(r.fair.waiting), len(r.fair.called))
	}
	if got, want := s.NowServing.UnixNano(), stampOf(t, r, tokens[99], "co-99"); got != want {
		t.Errorf("T = %d, want past the last expired stamp %d", got, want)
	}
	if d := r.Admit("co-99", tokens[99]); d.Refusal != RefusalTokenExpired {
		t.Errorf("expired token: %+v", d)
	}
	// A newcomer finds the room empty again.
	if d := r.Admit("co-x", ""); !d.Admitted {
		t.Errorf("newcomer after expiry: %+v", d)
	}
}

// A valid token the room did not issue (a restart, another instance)
// joins the line in stamp order; here another instance issued it after
// this room's T and before its own waiting shopper.
func TestFairAdoptsTokensItDidNotIssue(t *testing.T) {
	c := newClock()
	r := newRoom(t, Config{Mode: ModeFair, InProgress: 1}, c)
	fill(t, r, 1)
	c.Advance(time.Millisecond)
	other := newRoom(t, Config{Mode: ModeFair, InProgress: 1}, c) // same keys
	old := anyToken(t, other, "co-old")
	c.Advance(time.Millisecond)
	fresh := firstToken(t, r, "co-new")
	// The old shopper comes back before the first tick: it is adopted.
	if d := r.Admit("co-old", old); d.Refusal != RefusalWaitingRoom {
		t.Fatalf("old token before the tick: %+v", d)
	}
	if d := r.Admit("co-old", old); d.Refusal != RefusalWaitingRoom || r.Stats().Waiting != 2 {
		t.Fatalf("old token again: %+v, %d waiting; want it adopted once", d, r.Stats().Waiting)
	}
	r.Done()
	r.Tick()
	if d := r.Admit("co-new", fresh); d.Admitted {
		t.Errorf("the later stamp was admitted first")
	}
	if d := r.Admit("co-old", old); !d.Admitted {
		t.Errorf("the earlier, adopted stamp: %+v", d)
	}
}

// K does not wind up while nobody waits: after a long quiet spell with
// places free, a crowd gets N places at once and the rest wait, instead of
// the room calling shoppers for places it grew while idle.
func TestFairTargetDoesNotGrowWithNobodyWaiting(t *testing.T) {
	const n = 4
	c := newClock()
	r := newRoom(t, Config{Mode: ModeFair, InProgress: n}, c)
	// Some history first, so that the room has an estimate of how long a
	// checkout takes and could grow K.
	fill(t, r, 1)
	for range 20 {
		c.Advance(50 * time.Millisecond)
		r.Tick()
	}
	r.Done()
	for range 200 { // 10 s with nobody in progress or waiting
		c.Advance(50 * time.Millisecond)
		r.Tick()
	}
	if s := r.Stats(); s.Target != n {
		t.Fatalf("K %d after a quiet spell, want N = %d", s.Target, n)
	}
	admitted := 0
	for i := range 3 * n {
		if r.Admit(fmt.Sprint("co-", i), "").Admitted {
			admitted++
		}
	}
	c.Advance(50 * time.Millisecond)
	r.Tick()
	if s := r.Stats(); admitted != n || s.Called != 0 || s.Waiting != 2*n {
		t.Errorf("crowd of %d: %d admitted at once, %+v; want N admitted, nobody called, the rest waiting", 3*n, admitted, s)
	}

	// A line of shoppers who all left is nobody waiting either: the tick
	// passes them, and K stays.
	for range n {
		r.Done()
	}
	c.Advance(r.Config().GoneAfter + time.Nanosecond)
	r.Tick()
	if s := r.Stats(); s.Target != n || s.Waiting != 0 || s.Called != 0 {
		t.Errorf("a line of shoppers who left: %+v, want K = N and nobody waiting or called", s)
	}
}

// K's growth stops at N × (1 + GoneAfter / S), S the time a checkout
// takes by Little's law: more called shoppers on their way back than that
// cannot be of use. Without an estimate of S it does not grow at all.
func TestFairTargetCeiling(t *testing.T) {
	const n = 4
	c := newClock()
	r := newRoom(t, Config{Mode: ModeFair, InProgress: n}, c)
	fill(t, r, n)
	firstToken(t, r, "co-w") // someone waits, so a shortfall would grow K
	for range n {
		r.Done() // nobody in progress: the largest shortfall
	}
	f := &r.fair
	step := float64(50 * time.Millisecond)
	for range 100 {
		r.steer(step)
	}
	if f.target != n {
		t.Fatalf("no estimate of S, yet K grew to %v", f.target)
	}
	// 2 admissions over 0.5 s of one checkout in progress: S = 250 ms.
	s := 250 * time.Millisecond
	f.admissions, f.busy = 2, 2*float64(s)
	ceiling := n * (1 + float64(r.cfg.GoneAfter)/float64(s))
	for i := range 1000 {
		r.steer(step)
		if f.target > ceiling {
			t.Fatalf("step %d: K %v, above the ceiling %v", i, f.target, ceiling)
		}
	}
	if math.Abs(f.target-ceiling) > 1e-9 {
		t.Errorf("K %v after a long shortfall, want the ceiling %v", f.target, ceiling)
	}
	// In progress above N: K shrinks, by the rule's factor.
	r.inProgress = 2 * n
	before := f.target
	r.steer(float64(r.cfg.RetryAfter))
	if want := before * math.Exp(-1); math.Abs(f.target-want) > 1e-9 {
		t.Errorf("one RetryAfter at 2N in progress: K %v, want %v", f.target, want)
	}
}

// The controller's estimates (the share of called shoppers who come back,
// and the time a checkout takes) forget the past with the time constant
// GoneAfter, so that they follow a sale whose head of line turns from
// shoppers who come back to shoppers who have left: after GoneAfter of
// ticks with nothing happening, each has fallen by a factor e.
func TestFairEstimatesForget(t *testing.T) {
	c := newClock()
	r := newRoom(t, Config{Mode: ModeFair, InProgress: 4}, c)
	r.Tick()
	f := &r.fair
	f.back, f.gone, f.busy, f.admissions = 100, 50, 30, 120
	tick := r.Config().Tick
	for range int(r.Config().GoneAfter / tick) {
		c.Advance(tick)
		r.Tick()
	}
	for _, v := range []struct {
		name      string
		got, want float64
	}{{"came back", f.back, 100}, {"presumed gone", f.gone, 50}, {"busy", f.busy, 30}, {"admissions", f.admissions, 120}} {
		if want := v.want / math.E; math.Abs(v.got-want) > 1e-9*want {
			t.Errorf("%s: %v after GoneAfter, want %v", v.name, v.got, want)
		}
	}
}
