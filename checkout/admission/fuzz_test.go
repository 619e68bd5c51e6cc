package admission

import (
	"strconv"
	"testing"
)

// FuzzAdmit: whatever token a client sends, Admit does not panic, answers
// consistently, and admits only with a token that verifies for the
// checkout id.
func FuzzAdmit(f *testing.F) {
	c := newClock()
	seedRoom := newRoom(f, Config{Mode: ModeFair, InProgress: 2}, c)
	good := seedRoom.Admit("co-1", "").Token
	f.Add("co-1", good)
	f.Add("co-2", good)
	f.Add("co-1", "")
	f.Add("co-1", "k1..")
	f.Add("co-1", "k1.zzzzzzzzzzzzzzzz.AAAA")
	f.Add("", "k1.-1.")
	f.Fuzz(func(t *testing.T, id, token string) {
		r := newRoom(t, Config{Mode: ModeFair, InProgress: 2}, c)
		for range 2 { // once before and once after a tick
			d := r.Admit(id, token)
			switch {
			case d.Admitted != (d.Refusal == ""):
				t.Fatalf("inconsistent decision %+v", d)
			case d.Admitted && token == "":
				// A first attempt in an empty room: admitted at once, with a
				// token of its own.
				if _, err := verify(r.cfg.Keys, d.Token, id); err != nil {
					t.Fatalf("first attempt admitted with token %q for %q: %v", d.Token, id, err)
				}
				r.Done()
			case d.Admitted:
				if _, err := verify(r.cfg.Keys, token, id); err != nil {
					t.Fatalf("admitted %q for %q: %v", token, id, err)
				}
				r.Done()
			case d.Refusal == RefusalWaitingRoom && token != "" && d.Token != token:
				t.Fatalf("waiting room did not echo the token: %+v", d)
			}
			r.Tick()
		}
	})
}

// FuzzParseStamp: parseStamp takes exactly the spellings that
// strconv.FormatInt(v, 36) gives for v > 0, and reads them as
// strconv.ParseInt does.
func FuzzParseStamp(f *testing.F) {
	for _, s := range []string{"1", "dn5vc580lc02", "0", "01", "-1", "+1", "A", "1y2p0ij32e8e7", "1y2p0ij32e8e8", "zzzzzzzzzzzzz", "", "a.b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseStamp(s)
		want, err := strconv.ParseInt(s, 36, 64)
		canonical := err == nil && want > 0 && strconv.FormatInt(want, 36) == s
		if ok != canonical || ok && got != want {
			t.Fatalf("parseStamp(%q) = %d, %v; ParseInt gives %d, %v (canonical: %v)", s, got, ok, want, err, canonical)
		}
	})
}
