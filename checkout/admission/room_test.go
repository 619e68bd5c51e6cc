package admission

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// Modes without a room admit everyone and still count those in progress,
// with the high-water mark a runner reads and resets.
func TestModesWithoutARoomAdmitAllAndCount(t *testing.T) {
	for _, m := range []Mode{ModeNone, ModeQueue, ModeDeadline} {
		t.Run(m.String(), func(t *testing.T) {
			r := newRoom(t, Config{Mode: m, InProgress: 2}, newClock()) // N is ignored
			for i := range 10 {
				// A token is ignored too, even a bad one.
				if d := r.Admit(fmt.Sprint("co-", i), "junk"); !d.Admitted || d.Token != "" || d.Refusal != "" {
					t.Fatalf("admit %d: %+v", i, d)
				}
			}
			for range 4 {
				r.Done()
			}
			if s := r.Stats(); s.InProgress != 6 || s.MaxInProgress != 10 || s.Admitted != 10 || s.WaitingRoomAnswers != 0 || s.Mode != m {
				t.Errorf("stats %+v, want 6 in progress, max 10", s)
			}
			r.ResetMax()
			if s := r.Stats(); s.MaxInProgress != 6 {
				t.Errorf("after ResetMax: max %d, want the 6 in progress", s.MaxInProgress)
			}
			for range 20 { // more Done than Admit: never negative
				r.Done()
			}
			if s := r.Stats(); s.InProgress != 0 {
				t.Errorf("in progress %d after extra Done", s.InProgress)
			}
			r.Tick() // a no-op without a fair room
		})
	}
}

// The lottery never has more than N in progress, refuses at once (no
// token, no waiting), and gives a freed place to the next request.
func TestLotteryNeverExceedsN(t *testing.T) {
	const n = 3
	r := newRoom(t, Config{Mode: ModeLottery, InProgress: n}, newClock())
	for i := range n {
		if d := r.Admit(fmt.Sprint("co-", i), ""); !d.Admitted {
			t.Fatalf("admit %d of %d: %+v", i, n, d)
		}
	}
	if d := r.Admit("co-x", ""); d.Admitted || d.Refusal != RefusalWaitingRoom || d.Token != "" {
		t.Fatalf("with %d in progress: %+v, want a waiting-room refusal", n, d)
	}
	r.Done()
	if d := r.Admit("co-x", ""); !d.Admitted {
		t.Fatalf("after one answered: %+v", d)
	}

	// Random arrivals and answers, seeded: never more than N.
	rng := rand.New(rand.NewPCG(1, 2))
	in, refused := n, 0
	for i := range 5000 {
		if in > 0 && rng.IntN(2) == 0 {
			r.Done()
			in--
			continue
		}
		d := r.Admit(fmt.Sprint("co-", i), "")
		switch {
		case d.Admitted:
			in++
		case in < n:
			t.Fatalf("refused with %d in progress of %d", in, n)
		default:
			refused++
		}
		if s := r.Stats(); s.InProgress > n || s.InProgress != in {
			t.Fatalf("in progress %d (counted %d), N %d", s.InProgress, in, n)
		}
	}
	s := r.Stats()
	if s.MaxInProgress != n || s.WaitingRoomAnswers != int64(refused)+1 || refused == 0 {
		t.Errorf("stats %+v, %d refused", s, refused)
	}
}

// Admit, Done and Tick from many goroutines: the counts add up and a
// waiting room holds N (run with -race). The fake clock stands still, so
// nobody is presumed gone and K stays N.
func TestConcurrentUse(t *testing.T) {
	for _, m := range []Mode{ModeNone, ModeLottery, ModeFair} {
		t.Run(m.String(), func(t *testing.T) {
			const n = 4
			r := newRoom(t, Config{Mode: m, InProgress: n}, newClock())
			stop := make(chan struct{})
			ticked := make(chan struct{})
			go func() {
				defer close(ticked)
				for {
					select {
					case <-stop:
						return
					default:
						r.Tick()
						runtime.Gosched()
					}
				}
			}()
			var wg sync.WaitGroup
			for g := range 8 {
				// Each goroutine is a line of shoppers, each retrying until
				// admitted, then answered.
				wg.Go(func() {
					for k := range 20 {
						id, token := fmt.Sprintf("co-%d-%d", g, k), ""
						for {
							d := r.Admit(id, token)
							if d.Admitted {
								r.Done()
								break
							}
							if d.Refusal != RefusalWaitingRoom {
								t.Errorf("%s: %+v", id, d)
								return
							}
							token = d.Token
							runtime.Gosched()
						}
					}
				})
			}
			wg.Wait()
			close(stop)
			<-ticked
			s := r.Stats()
			if s.InProgress != 0 || s.Admitted != 8*20 || m.WaitingRoom() && s.MaxInProgress > n {
				t.Errorf("%+v", s)
			}
		})
	}
}
