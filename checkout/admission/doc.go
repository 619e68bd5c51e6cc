// Package admission decides which checkout requests the reference checkout
// lets in during a flash sale, and counts those in progress.
//
// It is pure logic: a [Room] reads the time from an injected clock, starts
// no goroutine and never sleeps. The checkout calls [Room.Admit] and
// [Room.Done] around every checkout and runs a ticker that calls [Room.Tick];
// the discrete-event predictor calls the same methods from its event loop
// with its simulated clock, so the two cannot disagree on the rule.
//
// # Modes
//
//   - "" (none): today's behaviour. Everyone is admitted; the shopper's
//     deadline is honoured by the checkout.
//   - "queue": no protection. Everyone is admitted; the checkout ignores the
//     deadline and lets a charge outlive the request ([Mode.DetachedCharge]).
//   - "deadline": everyone is admitted; the checkout honours the deadline
//     and skips a charge it cannot finish in time.
//   - "lottery": at most Config.InProgress admitted at once; everyone else is
//     answered at once with [RefusalWaitingRoom] and comes back at random
//     (their retry jitter), so the next free place goes to whoever happens
//     to ask first.
//   - "fair": a waiting room that admits in order of first attempt, with
//     signed tokens (below). The deadline is ignored.
//   - "fair-deadline": "fair", and the checkout honours the deadline.
//   - "paced": in order of first attempt, at most Config.InProgress at
//     once, and every shopper told when to come back (Decision.RetryAfter,
//     from its place in line and the measured service time), or, when its
//     turn would come too late for its deadline ([Room.AdmitBy]),
//     [RefusalNotToday] at once. The checkout honours the deadline. See
//     paced.go and docs/admission.md.
//
// Every mode counts the requests in progress (admitted, not yet answered)
// and their high-water mark ([Stats]), because a drill reports the most
// checkouts in progress at once whatever the mode.
//
// # Tokens
//
// In the fair modes (and paced) a first attempt (no token) gets a token, sent back to
// the shopper in the [TokenHeader] response header, that stamps the time of
// the first attempt; it is admitted at once only when the room has a place
// free and nobody waiting ahead of it (below), and otherwise answered with
// [RefusalWaitingRoom]. The shopper sends the token back on every retry. A
// token is
//
//	<key id>.<stamp>.<mac>
//
// where stamp is the first attempt's Unix time in nanoseconds in base 36
// (lower case, no leading zeros) and mac is HMAC-SHA256, in unpadded
// base64url, over a domain string, the key id, the stamp as 8 big-endian
// bytes and the checkout id. Every part is URL-safe, so the token fits a
// header, a cookie or a query string; it is 57 bytes plus the key id.
//
//   - The checkout id is in the MAC, not in the token: a token presented
//     with another checkout id does not verify (a shopper cannot hand its
//     early place to another purchase, nor replay someone else's).
//   - The key id names the key that signed it, so keys can be rotated: the
//     first configured key signs, every configured key verifies; a token
//     signed by a key since removed, or by an unknown key, is refused.
//   - The stamp is what orders shoppers, and what expires: a token older than
//     Config.TokenTTL is refused with [RefusalTokenExpired].
//   - Only canonical encodings verify (the stamp in lower-case base 36
//     without leading zeros, the MAC in strict base64url), so a token cannot
//     be altered into another spelling that still verifies. Tokens longer
//     than [MaxTokenLen] are refused before any work is done on them.
//
// A token that does not parse or verify is refused with
// [RefusalTokenInvalid]; the checkout answers both refusals with 400, which
// shoppers do not retry.
//
// # The fair controller
//
// The room keeps the line of stamps it issued (stamps strictly increase on
// one room: a stamp is the clock's reading, or the previous stamp plus
// 1 ns) and a "now serving" threshold T. It admits a request whose token's
// stamp is <= T, whatever else is going on: the threshold is the promise.
// T only moves forward, over the line in stamp order, and never past a
// stamp the room has not issued; a stamp it passes is called, unless its
// shopper is presumed gone.
//
// Liveness: the room notes when each waiting shopper was last seen (its
// token issued or presented). A shopper not seen for longer than
// Config.GoneAfter (by default 1.5 × RetryAfter + Tick: the longest wait
// between attempts of a shopper of gameday/load, and slack) is presumed
// gone: T passes its stamp without calling it, and a called shopper who
// has not come back stops counting. One who does come back is admitted,
// its stamp being <= T.
//
// Control: the room keeps
//
//	outstanding = in progress + share × called
//
// under a target K, where called is the called shoppers presumed present
// who have not come back yet, and share the part of recent calls whose
// shoppers came back. K is steered so that in progress stays near N
// (Config.InProgress). Every Tick:
//
//  1. Called shoppers presumed gone, and stamps older than TokenTTL, are
//     dropped; T passes the gone and expired stamps at the head of the
//     line.
//  2. ln K moves by (N − in progress)/N × dt/RetryAfter, dt the time
//     since the last Tick (at most RetryAfter). K never goes below N,
//     grows only while someone waits, and never grows past
//     N × (1 + GoneAfter/S), S the time a checkout takes (in progress over
//     admissions, Little's law); without an estimate of S it does not grow.
//  3. While outstanding < K, T moves onto the next stamp in the line: its
//     shopper is called, or, if presumed gone, passed.
//
// The estimates (share and S) are sums that forget with the time constant
// GoneAfter. A first attempt is admitted at once, T moving onto its new
// stamp, when nobody presumed present waits uncalled, fewer than N are in
// progress and outstanding < K: in an empty room, nobody waits for a
// Retry-After that no one needed. docs/admission.md says why the rule is
// this one.
//
// A valid token the room did not issue (issued before a restart with a key
// still configured, or by another instance sharing the keys) whose stamp is
// above T is adopted: its stamp joins the line in order, so the controller
// calls it in its turn.
//
// Memory is bounded: the room keeps only the stamps above T that are less
// than TokenTTL old, and the called shoppers it still counts (fewer than
// K / share).
package admission
