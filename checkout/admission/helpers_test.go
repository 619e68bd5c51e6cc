package admission

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// clock is a fake clock that moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var (
	keyA = Key{ID: "k1", Secret: []byte("0123456789abcdef-first")}
	keyB = Key{ID: "k2", Secret: []byte("fedcba9876543210-second")}
)

func newRoom(tb testing.TB, cfg Config, c *clock) *Room {
	tb.Helper()
	if cfg.Mode.Fair() && cfg.Keys == nil {
		cfg.Keys = []Key{keyA}
	}
	r, err := New(cfg, c.Now)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// firstToken asks for a token for id and checks it came with a waiting-room
// answer: the room is busy, or someone is waiting.
func firstToken(tb testing.TB, r *Room, id string) string {
	tb.Helper()
	d := r.Admit(id, "")
	if d.Admitted || d.Refusal != RefusalWaitingRoom || d.Token == "" {
		tb.Fatalf("first attempt of %s: %+v, want a waiting-room answer with a token", id, d)
	}
	return d.Token
}

// anyToken asks for a token for id, whether the first attempt is admitted
// (an empty room lets it in at once) or waits; an admitted attempt is
// answered at once (Done), so the room stays as it was.
func anyToken(tb testing.TB, r *Room, id string) string {
	tb.Helper()
	d := r.Admit(id, "")
	switch {
	case d.Token == "":
		tb.Fatalf("first attempt of %s: %+v, want a token", id, d)
	case d.Admitted:
		r.Done()
	case d.Refusal != RefusalWaitingRoom:
		tb.Fatalf("first attempt of %s: %+v", id, d)
	}
	return d.Token
}

// fill takes n places with first attempts that an empty room admits at
// once, so that the shoppers who come next wait.
func fill(tb testing.TB, r *Room, n int) {
	tb.Helper()
	for i := range n {
		if d := r.Admit(fmt.Sprint("co-fill-", i), ""); !d.Admitted {
			tb.Fatalf("filling place %d of %d: %+v", i+1, n, d)
		}
	}
}

// stampOf reads a token's stamp, checking it verifies for id.
func stampOf(tb testing.TB, r *Room, token, id string) int64 {
	tb.Helper()
	s, err := verify(r.cfg.Keys, token, id)
	if err != nil {
		tb.Fatalf("token %q of %s: %v", token, id, err)
	}
	return s
}

// sign makes the token of (stamp, checkoutID) with key. A room signs
// with its pooled signer.
func sign(key Key, stamp int64, checkoutID string) string {
	return newSigner(key).sign(stamp, checkoutID)
}

// verify checks token against checkoutID with keys and returns its stamp
// (Unix nanoseconds). It does not look at the time.
func verify(keys []Key, token, checkoutID string) (int64, error) {
	return verifyWith(signers(keys), token, checkoutID)
}
