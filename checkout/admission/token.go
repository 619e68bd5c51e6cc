package admission

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash"
	"math"
	"strconv"
	"strings"
	"sync"
)

// TokenHeader is the HTTP header that carries a waiting-room token: the
// checkout sets it on its answers, the shopper sends it back on retries.
const TokenHeader = "Waiting-Room-Token"

// MaxTokenLen bounds a token on input; a token the room signs is 57 bytes
// plus its key id, so at most 89.
const MaxTokenLen = 128

// macDomain separates this MAC from any other use of the same secret.
const macDomain = "gameday waiting-room token v1\n"

var macEncoding = base64.RawURLEncoding.Strict()

// macLen is the length of a token's encoded MAC.
var macLen = macEncoding.EncodedLen(sha256.Size)

// Why a token was refused, for the refusal and the tests.
var (
	errMalformed  = errors.New("malformed token")
	errUnknownKey = errors.New("token signed with an unknown key")
	errBadMAC     = errors.New("token signature does not verify")
)

// signer signs and verifies with one key. A fair room signs or verifies on
// every attempt of every shopper, so the HMAC state is reused rather than
// made per call: hmac.New hashes the padded key twice and allocates both
// hash states, which was most of the predictor's time in the fair modes,
// while Reset on a used state restores the keyed state from a saved copy.
// The states are pooled, not shared under a lock, so that concurrent
// requests sign and verify in parallel.
type signer struct {
	key    Key
	prefix []byte // macDomain, the key id, '\n': the MAC input's fixed start
	pool   sync.Pool
}

// macState is one reusable HMAC state with scratch space, so that a MAC
// computed, encoded or decoded through it allocates nothing.
type macState struct {
	h   hash.Hash
	in  []byte // the MAC input, then the presented MAC's text
	sum [sha256.Size]byte
	got [sha256.Size]byte // the presented MAC, decoded
}

func newSigner(k Key) *signer {
	s := &signer{key: k, prefix: []byte(macDomain + k.ID + "\n")}
	s.pool.New = func() any { return &macState{h: hmac.New(sha256.New, k.Secret)} }
	return s
}

// mac computes the MAC of (stamp, checkoutID) into st.sum. The key id holds
// no '\n' and the stamp is fixed-width, so the input is unambiguous.
func (s *signer) mac(st *macState, stamp int64, checkoutID string) []byte {
	st.in = append(append(st.in[:0], s.prefix...), 0, 0, 0, 0, 0, 0, 0, 0)
	binary.BigEndian.PutUint64(st.in[len(s.prefix):], uint64(stamp))
	st.in = append(st.in, checkoutID...)
	st.h.Reset()
	st.h.Write(st.in)
	return st.h.Sum(st.sum[:0])
}

// sign makes the token of (stamp, checkoutID).
func (s *signer) sign(stamp int64, checkoutID string) string {
	st := s.pool.Get().(*macState)
	defer s.pool.Put(st)
	m := s.mac(st, stamp, checkoutID)
	var b strings.Builder
	b.Grow(len(s.key.ID) + 1 + 13 + 1 + macLen)
	b.WriteString(s.key.ID)
	b.WriteByte('.')
	var num [13]byte // the largest int64 is 13 digits in base 36
	b.Write(strconv.AppendInt(num[:0], stamp, 36))
	b.WriteByte('.')
	var enc [64]byte
	macEncoding.Encode(enc[:macLen], m)
	b.Write(enc[:macLen])
	return b.String()
}

// check reports whether macS is the canonical encoding of the MAC of
// (stamp, checkoutID), in constant time for a well-formed macS.
func (s *signer) check(macS string, stamp int64, checkoutID string) error {
	st := s.pool.Get().(*macState)
	defer s.pool.Put(st)
	// Strict decoding takes only the canonical spelling (no padding, the
	// unused bits zero): a MAC cannot be respelled into one that verifies.
	st.in = append(st.in[:0], macS...)
	if n, err := macEncoding.Decode(st.got[:], st.in); err != nil || n != sha256.Size {
		return errMalformed
	}
	if !hmac.Equal(st.got[:], s.mac(st, stamp, checkoutID)) {
		return errBadMAC
	}
	return nil
}

// signers makes a signer per key, in the keys' order: the first signs.
func signers(keys []Key) []*signer {
	out := make([]*signer, len(keys))
	for i, k := range keys {
		out[i] = newSigner(k)
	}
	return out
}

// verifyWith is verify with the room's signers.
func verifyWith(ss []*signer, token, checkoutID string) (int64, error) {
	if len(token) > MaxTokenLen {
		return 0, errMalformed
	}
	keyID, rest, ok1 := strings.Cut(token, ".")
	stampS, macS, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || len(macS) != macLen {
		return 0, errMalformed
	}
	stamp, ok := parseStamp(stampS)
	if !ok {
		return 0, errMalformed
	}
	for _, s := range ss {
		if s.key.ID == keyID {
			if err := s.check(macS, stamp, checkoutID); err != nil {
				return 0, err
			}
			return stamp, nil
		}
	}
	return 0, errUnknownKey
}

// parseStamp reads a stamp as the room spells it, and only so: lower-case
// base 36, no sign, no leading zero, above 0 and at most MaxInt64. Any
// other spelling of the same number (strconv.ParseInt also takes upper
// case, a sign and leading zeros) would let an altered token verify.
// Written out rather than ParseInt and a check that FormatInt gives the
// same text back, which was a tenth of the predictor's time.
func parseStamp(s string) (int64, bool) {
	if s == "" || len(s) > 13 || s[0] == '0' {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		var d byte
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'z':
			d = c - 'a' + 10
		default:
			return 0, false
		}
		// 13 digits of base 36 reach 36^13 ≈ 1.7e20, past uint64 (1.8e19):
		// check before multiplying.
		if v > (math.MaxInt64-uint64(d))/36 {
			return 0, false
		}
		v = v*36 + uint64(d)
	}
	return int64(v), true
}
