package admission

import (
	"fmt"
	"testing"
)

// BenchmarkFairRetry is a waiting shopper's retry, the fair room's most
// common request in a sale: verify the token, find the stamp in the line,
// answer "wait".
func BenchmarkFairRetry(b *testing.B) {
	c := newClock()
	r := newRoom(b, Config{Mode: ModeFair, InProgress: 1}, c)
	r.Admit("co-fill", "") // in an empty room, the first attempt gets in
	tokens := make([]string, 1000)
	for i := range tokens {
		tokens[i] = r.Admit(fmt.Sprint("co-", i), "").Token
	}
	ids := make([]string, len(tokens))
	for i := range ids {
		ids[i] = fmt.Sprint("co-", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if d := r.Admit(ids[i], tokens[i]); d.Refusal != RefusalWaitingRoom {
			b.Fatalf("%+v", d)
		}
		i = (i + 1) % len(tokens)
	}
}

// BenchmarkFairFirstAttempt is a newcomer joining the line: a token
// signed.
func BenchmarkFairFirstAttempt(b *testing.B) {
	c := newClock()
	r := newRoom(b, Config{Mode: ModeFair, InProgress: 1}, c)
	r.Admit("co-fill", "")
	b.ReportAllocs()
	for b.Loop() {
		if d := r.Admit("co-x", ""); d.Token == "" {
			b.Fatalf("%+v", d)
		}
	}
}
