package admission

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/internal/fileerr"
)

// Key signs and verifies waiting-room tokens.
type Key struct {
	// ID names the key inside every token it signs: 1 to 32 of A-Z a-z 0-9
	// _ -. It is not secret.
	ID string
	// Secret is the HMAC-SHA256 key, at least MinSecretLen bytes.
	Secret []byte
}

// MinSecretLen is the shortest secret a Key may have (128 bits).
const MinSecretLen = 16

// GenerateKey returns a key with a random 32-byte secret, for a checkout
// that was given none: its tokens do not survive a restart.
func GenerateKey(id string) Key {
	k := Key{ID: id, Secret: make([]byte, 32)}
	_, _ = rand.Read(k.Secret) // never fails (crypto/rand crashes the program instead)
	return k
}

// Config is a room's configuration. Every zero value is documented and
// replaced by a default in New.
type Config struct {
	// Mode is the admission mode; ModeNone (zero value) admits everyone.
	Mode Mode
	// InProgress is N, the checkouts a waiting room lets in at once.
	// Required (> 0) in the waiting-room modes, ignored in the others.
	InProgress int
	// RetryAfter is the wait a waiting-room answer asks for; 0 means 1s.
	RetryAfter time.Duration
	// TokenTTL is how long a fair token is valid after its stamp; 0 means
	// 10 minutes. It bounds what the room remembers, too.
	TokenTTL time.Duration
	// Tick is how often the owner of the room should call Tick; 0 means
	// 50ms. The room uses it only in GoneAfter's default: the controller
	// steps by the time that actually passed since the last Tick.
	Tick time.Duration
	// GoneAfter is how long a fair room waits for a shopper holding a
	// token to show itself again before presuming it gone: a shopper not
	// seen (its token not presented) for longer is skipped when the
	// threshold passes its stamp, and stops counting as called. 0 means
	// 1.5 × RetryAfter + Tick: the longest wait a shopper of gameday/load
	// makes between attempts (Retry-After times a jitter of at most 1.5,
	// its default), plus one tick of slack for the network and the
	// controller's step. Set it to the longest wait your shoppers make
	// plus slack; too short, and live shoppers are skipped (they are then
	// admitted at once when they come back, so they lose nothing, but the
	// room lets more in than it meant to).
	GoneAfter time.Duration
	// Need is, in the paced room, the most an admitted checkout takes to
	// finish (the checkout's MinPaymentTime: its longest charge). A shopper
	// whose turn would come less than Need before its deadline is told
	// "not today" (RefusalNotToday) at once. 0: none (only a turn after the
	// deadline itself is refused).
	Need time.Duration
	// Keys sign and verify fair tokens: the first signs, every one
	// verifies. Required (at least one) in the fair modes; ignored, but
	// checked, in the others.
	Keys []Key
}

// ConfigError is one setting of a Config that cannot work: Field names it
// as a scenario does ("admission.in_progress"), Value is its value, Msg
// what is wrong. It is the one error type of every input file and config
// gameday checks (internal/fileerr), named here so that a program outside
// this module, which cannot import an internal package, can find it with
// errors.As.
type ConfigError = fileerr.Error

// Validate reports every setting that cannot work, each a *ConfigError
// ("admission.in_progress -1: must not be negative"), joined with
// errors.Join.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, value, msg string) {
		errs = append(errs, &ConfigError{Field: field, Value: value, Msg: msg})
	}
	mode, err := ParseMode(string(c.Mode))
	if err != nil {
		bad("admission.mode", "", err.Error())
	}
	switch {
	case c.InProgress < 0:
		bad("admission.in_progress", strconv.Itoa(c.InProgress), "must not be negative")
	case err == nil && mode.WaitingRoom() && c.InProgress == 0:
		bad("admission.in_progress", "", fmt.Sprintf("required (greater than 0) in mode %s", mode))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"retry_after", c.RetryAfter}, {"token_ttl", c.TokenTTL}, {"tick", c.Tick}, {"gone_after", c.GoneAfter}, {"need", c.Need}} {
		if d.v < 0 {
			bad("admission."+d.name, d.v.String(), "must not be negative")
		}
	}
	if err == nil && mode.Fair() && len(c.Keys) == 0 {
		bad("admission.keys", "", fmt.Sprintf("at least one key is required in mode %s", mode))
	}
	seen := map[string]bool{}
	for i, k := range c.Keys {
		field := "admission.keys[" + strconv.Itoa(i) + "]"
		switch {
		case k.ID == "" || len(k.ID) > 32 || strings.Trim(k.ID, keyIDChars) != "":
			bad(field+".id", strconv.Quote(k.ID), "want 1 to 32 of A-Z a-z 0-9 _ -")
		case seen[k.ID]:
			bad(field+".id", strconv.Quote(k.ID), "used twice")
		}
		seen[k.ID] = true
		if len(k.Secret) < MinSecretLen {
			// The secret itself is never printed.
			bad(field+".secret", "", fmt.Sprintf("%d bytes, want at least %d", len(k.Secret), MinSecretLen))
		}
	}
	return errors.Join(errs...)
}

const keyIDChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"

// normalise fills the defaults of a valid config.
func (c *Config) normalise() {
	c.Mode, _ = ParseMode(string(c.Mode))
	if c.RetryAfter == 0 {
		c.RetryAfter = time.Second
	}
	if c.TokenTTL == 0 {
		c.TokenTTL = 10 * time.Minute
	}
	if c.Tick == 0 {
		c.Tick = 50 * time.Millisecond
	}
	if c.GoneAfter == 0 {
		c.GoneAfter = c.RetryAfter*3/2 + c.Tick
	}
	// The room keeps its own copy: a caller changing its slice afterwards
	// must not change the keys under a running room.
	c.copyKeys()
}

// copyKeys replaces the keys with deep copies.
func (c *Config) copyKeys() {
	keys := make([]Key, len(c.Keys))
	for i, k := range c.Keys {
		keys[i] = Key{ID: k.ID, Secret: append([]byte(nil), k.Secret...)}
	}
	c.Keys = keys
}
