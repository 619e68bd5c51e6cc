package admission

import (
	"encoding/base64"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// flip returns token with byte i replaced by another byte of the token's
// alphabet, so the token still looks like one.
func flip(token string, i int) string {
	b := []byte(token)
	switch {
	case b[i] == 'z':
		b[i] = 'y'
	case b[i] == '9':
		b[i] = '8'
	default:
		b[i]++
	}
	return string(b)
}

// Every way a token can be wrong is refused, with the right refusal; the
// token as issued is admitted (the control that lets this test fail).
func TestTokenRefusals(t *testing.T) {
	c := newClock()
	r := newRoom(t, Config{Mode: ModeFair, InProgress: 1}, c)
	good := anyToken(t, r, "co-1")
	r.Tick()
	keyID, rest, _ := strings.Cut(good, ".")
	stampS, macS, _ := strings.Cut(rest, ".")
	stamp := stampOf(t, r, good, "co-1")

	type row struct {
		name, token, id string
		want            string // "" admitted
	}
	rows := []row{
		{"as issued", good, "co-1", ""},
		{"empty parts", "..", "co-1", RefusalTokenInvalid},
		{"two parts", keyID + "." + stampS, "co-1", RefusalTokenInvalid},
		{"four parts", good + ".x", "co-1", RefusalTokenInvalid},
		{"too long", good + strings.Repeat("A", MaxTokenLen), "co-1", RefusalTokenInvalid},
		{"stamp in upper case", keyID + "." + strings.ToUpper(stampS) + "." + macS, "co-1", RefusalTokenInvalid},
		{"stamp with a leading zero", keyID + ".0" + stampS + "." + macS, "co-1", RefusalTokenInvalid},
		{"stamp with a sign", keyID + ".+" + stampS + "." + macS, "co-1", RefusalTokenInvalid},
		{"negative stamp", keyID + ".-" + stampS + "." + macS, "co-1", RefusalTokenInvalid},
		{"mac padded", good + "=", "co-1", RefusalTokenInvalid},
		{"mac truncated", good[:len(good)-2], "co-1", RefusalTokenInvalid},
		{"unknown key id", "k9." + stampS + "." + macS, "co-1", RefusalTokenInvalid},
		{"unknown key, same secret", sign(Key{ID: "k9", Secret: keyA.Secret}, stamp, "co-1"), "co-1", RefusalTokenInvalid},
		{"right id, wrong secret", sign(Key{ID: keyA.ID, Secret: keyB.Secret}, stamp, "co-1"), "co-1", RefusalTokenInvalid},
		{"replayed for another checkout", good, "co-2", RefusalTokenInvalid},
		{"another checkout's token", sign(keyA, stamp, "co-2"), "co-1", RefusalTokenInvalid},
	}
	// Each byte of the stamp and of the MAC, altered.
	for i := len(keyID) + 1; i < len(keyID)+1+len(stampS); i++ {
		rows = append(rows, row{"stamp byte altered", flip(good, i), "co-1", RefusalTokenInvalid})
	}
	for i := len(good) - len(macS); i < len(good); i++ {
		rows = append(rows, row{"mac byte altered", flip(good, i), "co-1", RefusalTokenInvalid})
	}
	// The last base64 character carries 2 unused bits: another spelling
	// of the same MAC is not accepted either.
	last := strings.IndexByte(base64URL, good[len(good)-1])
	rows = append(rows, row{"mac's unused bits set", good[:len(good)-1] + string(base64URL[last|1]), "co-1", RefusalTokenInvalid})
	// Forgeries: random bytes, and random strings of the right shape.
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		b := make([]byte, 1+rng.IntN(2*MaxTokenLen)) // "" is no token: it gets one
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		mac := make([]byte, 32)
		for i := range mac {
			mac[i] = byte(rng.Uint32())
		}
		rows = append(rows,
			row{"random bytes", string(b), "co-1", RefusalTokenInvalid},
			row{"random mac", keyID + "." + stampS + "." + base64.RawURLEncoding.EncodeToString(mac), "co-1", RefusalTokenInvalid})
	}

	for _, tt := range rows {
		if tt.token == good && tt.id == "co-1" && tt.want != "" {
			t.Fatalf("%s: the altered token is the original", tt.name)
		}
		d := r.Admit(tt.id, tt.token)
		if d.Admitted {
			r.Done()
		}
		if d.Refusal != tt.want || d.Admitted != (tt.want == "") {
			t.Errorf("%s: %q for %s: %+v, want refusal %q", tt.name, tt.token, tt.id, d, tt.want)
		}
		if tt.want != "" && d.Token != "" {
			t.Errorf("%s: a refused token was echoed", tt.name)
		}
	}
	if s := r.Stats(); s.TokensRefused != int64(len(rows)-1) {
		t.Errorf("%d tokens refused, want %d", s.TokensRefused, len(rows)-1)
	}

	// Why, for the ones that parse.
	if _, err := verify(r.cfg.Keys, good, "co-2"); !errors.Is(err, errBadMAC) {
		t.Errorf("replay: %v, want a bad MAC", err)
	}
	if _, err := verify(r.cfg.Keys, "k9."+stampS+"."+macS, "co-1"); !errors.Is(err, errUnknownKey) {
		t.Errorf("unknown key: %v", err)
	}
}

const base64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A token is valid for TokenTTL after its stamp, not a nanosecond more.
func TestTokenExpiry(t *testing.T) {
	for _, tt := range []struct {
		after time.Duration
		want  string
	}{
		{time.Minute, ""}, // exactly the ttl: still valid
		{time.Minute + time.Nanosecond, RefusalTokenExpired}, // older than the ttl
	} {
		c := newClock()
		r := newRoom(t, Config{Mode: ModeFair, InProgress: 1, TokenTTL: time.Minute}, c)
		tok := anyToken(t, r, "co-1")
		r.Tick()
		c.Advance(tt.after)
		if d := r.Admit("co-1", tok); d.Refusal != tt.want {
			t.Errorf("after %v: %+v, want refusal %q", tt.after, d, tt.want)
		}
	}
}

// Keys rotate: the first key signs; a token signed by an older key verifies
// while that key is still configured and is refused once it is removed.
func TestKeyRotation(t *testing.T) {
	c := newClock()
	before := newRoom(t, Config{Mode: ModeFair, InProgress: 4, Keys: []Key{keyA}}, c)
	old := anyToken(t, before, "co-1")
	if !strings.HasPrefix(old, keyA.ID+".") {
		t.Fatalf("token %q not signed by %s", old, keyA.ID)
	}
	c.Advance(time.Millisecond)

	// Rotating: the new key first, the old one still verifies. The old
	// token, presented first to the new room, is taken into its line.
	rotating := newRoom(t, Config{Mode: ModeFair, InProgress: 4, Keys: []Key{keyB, keyA}}, c)
	if d := rotating.Admit("co-1", old); d.Refusal != RefusalWaitingRoom {
		t.Errorf("old-key token while rotating: %+v, want it accepted into the room", d)
	}
	fresh := firstToken(t, rotating, "co-2") // behind the old one
	if !strings.HasPrefix(fresh, keyB.ID+".") {
		t.Errorf("new token %q not signed by the first key %s", fresh, keyB.ID)
	}
	if _, err := verify([]Key{keyB}, fresh, "co-2"); err != nil {
		t.Errorf("new token does not verify with the new key alone: %v", err)
	}
	rotating.Tick()
	if d := rotating.Admit("co-1", old); !d.Admitted {
		t.Errorf("old-key token after the tick: %+v", d)
	}

	// Retired: the old key is gone.
	retired := newRoom(t, Config{Mode: ModeFair, InProgress: 4, Keys: []Key{keyB}}, c)
	if d := retired.Admit("co-1", old); d.Refusal != RefusalTokenInvalid {
		t.Errorf("old-key token after removal: %+v, want %s", d, RefusalTokenInvalid)
	}
	retired.Tick()
	if d := retired.Admit("co-2", fresh); d.Refusal != RefusalWaitingRoom { // adopted, not refused
		t.Errorf("new-key token after removal of the old key: %+v", d)
	}
}

// The room keeps its own copy of the keys: changing the caller's slice
// afterwards, or the one Config returns, changes nothing.
func TestKeysAreCopied(t *testing.T) {
	secret := append([]byte(nil), keyA.Secret...)
	keys := []Key{{ID: keyA.ID, Secret: secret}}
	c := newClock()
	r := newRoom(t, Config{Mode: ModeFair, InProgress: 1, Keys: keys}, c)
	tok := anyToken(t, r, "co-1")
	secret[0] ^= 0xff
	keys[0].ID = "changed"
	r.Config().Keys[0].Secret[0] ^= 0xff
	r.Tick()
	if d := r.Admit("co-1", tok); !d.Admitted {
		t.Errorf("after the caller changed its keys: %+v", d)
	}
}
