package admission

import (
	"fmt"
	"testing"
	"time"
)

// pacedRoom is a paced room of n with a service estimate: the fake clock
// runs 3s of ticks with every place busy and each checkout taking 250ms,
// so the room has measured S = 250ms (a place frees every 250ms / n).
// The room is left full.
func pacedRoom(t *testing.T, n int, need time.Duration) (*Room, *clock) {
	t.Helper()
	c := newClock()
	r := newRoom(t, Config{Mode: ModePaced, InProgress: n, Need: need}, c)
	r.Tick()
	type job struct{ ends time.Time }
	var busy []job
	for k := 0; k < 60; k++ { // 60 ticks of 50ms
		for len(busy) < n {
			if d := r.Admit(fmt.Sprint("co-warm-", k, "-", len(busy)), ""); !d.Admitted {
				t.Fatalf("warming up: %+v", d)
			}
			busy = append(busy, job{c.Now().Add(250 * time.Millisecond)})
		}
		c.Advance(50 * time.Millisecond)
		r.Tick()
		kept := busy[:0]
		for _, j := range busy {
			if c.Now().Before(j.ends) {
				kept = append(kept, j)
			} else {
				r.Done()
			}
		}
		busy = kept
	}
	for len(busy) < n { // full again
		fill(t, r, 1)
		busy = append(busy, job{})
	}
	if s := r.Stats(); s.ServiceMS < 230 || s.ServiceMS > 270 || s.InProgress != n {
		t.Fatalf("after the warm-up: %+v, want S about 250ms and the room full", s)
	}
	return r, c
}

// Every waiting answer says when to come back: the first n in line (the
// door) soon, half the time between two places freeing (at least 5ms, at
// most a tick), to take the next free place; the others when they will
// have reached the door, divided by 1.5 so that even the latest jitter of
// gameday/load (×1.5) brings them back in time, and at most RetryAfter.
func TestPacedTellsEachWhenToComeBack(t *testing.T) {
	const n = 4
	r, _ := pacedRoom(t, n, 0)
	every := time.Duration(r.Stats().ServiceMS*float64(time.Millisecond)) / n
	poll := min(max(every/2, 5*time.Millisecond), 50*time.Millisecond)
	for i := range 30 {
		d := r.Admit(fmt.Sprint("co-", i), "")
		if d.Admitted || d.Refusal != RefusalWaitingRoom || d.Token == "" {
			t.Fatalf("shopper %d: %+v, want a waiting-room answer with a token", i, d)
		}
		want := poll
		if i >= n {
			want = min(max(time.Duration(i-n+1)*every*2/3, poll), time.Second)
		}
		if diff := d.RetryAfter - want; diff < -2*time.Millisecond || diff > 2*time.Millisecond {
			t.Errorf("shopper %d (place %d): come back in %s, want about %s", i, i, d.RetryAfter, want)
		}
		if d.RetryAfter%time.Millisecond != 0 {
			t.Errorf("shopper %d: %s is not whole milliseconds (retry_after_ms)", i, d.RetryAfter)
		}
	}
	if s := r.Stats(); s.Waiting != 30 || s.WaitingRoomAnswers != 30 {
		t.Errorf("stats %+v, want 30 waiting", s)
	}
}

// A shopper whose turn would come too close to its deadline for a
// purchase (Need) is told "not today" at once, and leaves the line: the
// ones behind it move up. A newcomer needs a twentieth of its wait to
// spare; a shopper already in line is kept while it can still make it.
func TestPacedNotToday(t *testing.T) {
	const n, need = 4, 400 * time.Millisecond
	r, c := pacedRoom(t, n, need)
	every := time.Duration(r.Stats().ServiceMS*float64(time.Millisecond)) / n
	poll := min(max(every/2, 5*time.Millisecond), 50*time.Millisecond)
	for i := range 20 {
		firstToken(t, r, fmt.Sprint("co-ahead-", i))
	}
	// 21st in line: its turn is 21 frees away, then a poll, then need.
	turn := 21 * every
	late := r.AdmitBy("co-late", "", c.Now().Add(turn+poll+need-20*time.Millisecond))
	if late.Refusal != RefusalNotToday || late.Admitted || late.Token == "" {
		t.Fatalf("a shopper whose turn is after its deadline: %+v, want not_today", late)
	}
	edge := r.AdmitBy("co-edge", "", c.Now().Add(turn+poll+need+20*time.Millisecond))
	if edge.Refusal != RefusalNotToday {
		t.Fatalf("a newcomer with less than a twentieth of its wait to spare: %+v, want not_today", edge)
	}
	ok := r.AdmitBy("co-ok", "", c.Now().Add(turn*21/20+poll+need+20*time.Millisecond))
	if ok.Refusal != RefusalWaitingRoom {
		t.Fatalf("a shopper whose turn is in time, with the margin: %+v, want to wait", ok)
	}
	// Back in line with a deadline inside the margin (the rate has
	// drifted, say): kept, since it can still make it.
	if d := r.AdmitBy("co-ok", ok.Token, c.Now().Add(turn+poll+need+20*time.Millisecond)); d.Refusal != RefusalWaitingRoom {
		t.Errorf("in line, still able to make it: %+v, want to wait", d)
	}
	if s := r.Stats(); s.NotToday != 2 || s.Waiting != 21 {
		t.Errorf("stats %+v, want 2 not today and 21 waiting", s)
	}
	// A shopper told not today asks again: told the same at once; its
	// token gives it no place.
	if d := r.AdmitBy("co-late", late.Token, c.Now().Add(turn+poll+need-20*time.Millisecond)); d.Refusal != RefusalNotToday {
		t.Errorf("back with its token: %+v, want not_today again", d)
	}
}

// The door: with a place free, whichever of the first n in line asks first
// takes it, a shopper further back does not; a shopper keeps its place
// while it comes back when told, and loses it when it does not.
func TestPacedDoor(t *testing.T) {
	const n = 2
	r, c := pacedRoom(t, n, 0)
	tokens := make([]string, 6)
	for i := range tokens {
		tokens[i] = firstToken(t, r, fmt.Sprint("co-", i))
	}
	r.Done() // a place frees
	if d := r.Admit("co-4", tokens[4]); d.Admitted {
		t.Fatalf("fifth in line took the free place: %+v", d)
	}
	if d := r.Admit("co-1", tokens[1]); !d.Admitted {
		t.Fatalf("second in line, at the door, with a place free: %+v", d)
	}
	// Now 0, 2, 3, 4, 5 wait; 2 has moved up to the door.
	r.Done()
	if d := r.Admit("co-2", tokens[2]); !d.Admitted {
		t.Fatalf("third, now second, with a place free: %+v", d)
	}
	// A forged or someone else's token is refused, not queued.
	if d := r.Admit("co-3", tokens[4]); d.Refusal != RefusalTokenInvalid {
		t.Errorf("someone else's token: %+v", d)
	}
	// Shopper 0 never comes back: gone once its due time passes (its
	// wait × 1.5 plus a tick); the others, who came back, keep their
	// places and move up.
	for k := 0; k < 10; k++ {
		c.Advance(50 * time.Millisecond)
		r.Tick()
		for _, i := range []int{3, 4, 5} {
			if d := r.Admit(fmt.Sprint("co-", i), tokens[i]); d.Refusal != RefusalWaitingRoom {
				t.Fatalf("shopper %d back: %+v", i, d)
			}
		}
	}
	if s := r.Stats(); s.Waiting != 3 {
		t.Fatalf("stats %+v, want 3 waiting (shopper 0 gone)", s)
	}
	r.Done()
	if d := r.Admit("co-4", tokens[4]); !d.Admitted {
		t.Errorf("second in line once 0 was gone, with a place free: %+v", d)
	}
	// Shopper 0 does come back after all: it is let in by its stamp, first
	// in line again.
	r.Done()
	if d := r.Admit("co-0", tokens[0]); !d.Admitted {
		t.Errorf("the first shopper, back late, with a place free: %+v", d)
	}
}

// Without an estimate yet (the first seconds of a sale), waiting answers
// ask for Config.RetryAfter and nobody is told "not today".
func TestPacedWithoutAnEstimate(t *testing.T) {
	c := newClock()
	r := newRoom(t, Config{Mode: ModePaced, InProgress: 1, Need: time.Second}, c)
	fill(t, r, 1)
	d := r.AdmitBy("co-a", "", c.Now().Add(100*time.Millisecond))
	if d.Refusal != RefusalWaitingRoom || d.RetryAfter != time.Second {
		t.Errorf("without an estimate: %+v, want the room's Retry-After, 1s", d)
	}
}
