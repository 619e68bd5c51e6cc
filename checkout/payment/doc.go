// Package payment is the payment-gateway stand-in that the reference checkout
// calls during a drill, and the Go client the checkout uses to call it.
//
// The [Server] behaves like a card provider during a flash sale: every charge
// takes a processing time drawn from a seeded distribution (uniform in
// [MinLatency, MaxLatency], plus an optional exponential long tail), a seeded
// fraction of charges is declined, only [Config].Slots charges are processed at
// once while the rest wait, idempotency keys are honoured, and every charge is
// recorded with its time so that the runner can reconcile the books.
//
// # Determinism
//
// A charge's processing time and its decline decision are drawn from a PCG
// generator seeded by (Config.Seed, FNV-64a of the idempotency key). The same
// seed and key give the same latency and decision whatever order charges
// arrive in. The decline decision does not depend on the latency settings.
// Charge IDs are "ch_" followed by an eight-digit counter in the order charges
// complete (wider after 99,999,999 charges), so they are unique within a
// server and sort as strings in creation order.
//
// # HTTP API
//
// Every body, request and answer, is JSON. Every error answer is
// {"error": "..."} and names the offending field where there is one. Request
// bodies are limited to 1 MiB and must hold exactly one JSON object with no
// unknown fields.
//
// POST /charges creates a charge:
//
//	{"key": "co-42-1", "amount_cents": 1299, "shopper": "s-1", "sku": "sku-1"}
//
// key and shopper are required, amount_cents must be greater than 0, sku is
// optional. The charge first waits for a processing slot; a client that goes
// away while waiting is not charged and leaves no record. Once it holds a slot
// the charge is processed for its drawn latency and then recorded, even if the
// client has gone away meanwhile (a real provider does not notice a lost
// reply). Answers:
//
//   - 201 Created with the charge, for a key seen for the first time. A
//     decline is a normal 201 answer with status "declined".
//   - 200 OK with the first charge, in its current state, when the key was
//     already used with the same amount_cents, shopper and sku. A request that
//     arrives while the first charge with its key is still waiting or
//     processing waits for that charge's outcome; a key is never charged
//     twice. If the first request left while waiting for a slot, the next one
//     takes its place.
//   - 409 Conflict when the key was already used with a different amount_cents,
//     shopper or sku; nothing is charged.
//   - 400 Bad Request for a body that is not valid JSON, has an unknown field,
//     or misses a required field.
//   - 500 Internal Server Error when the charge could not be written down
//     (see Durable books): nothing was charged, and the request may be
//     retried with the same key. POST /charges/void answers the same way
//     for a void it could not write down.
//
// A charge looks like this:
//
//	{"id": "ch_00000001", "key": "co-42-1", "amount_cents": 1299,
//	 "shopper": "s-1", "sku": "sku-1", "status": "approved",
//	 "created_at": "2025-11-28T09:00:00.05Z"}
//
// status is "approved", "declined" or "voided" (see POST /charges/void).
// created_at is when processing ended and the outcome was recorded, in UTC.
// voided_at is present only on a voided charge.
//
// POST /charges/void voids by idempotency key:
//
//	{"key": "co-42-1"}
//
// If a charge with the key exists, it answers 200 OK with the charge: an
// approved charge becomes "voided" with voided_at set to now; a voided or
// declined charge is returned unchanged. If no charge with the key has been
// recorded yet (never seen, or still waiting or processing), the void is kept
// as a tombstone and the answer is 200 OK with
//
//	{"key": "co-42-1", "status": "voided", "voided_at": "2025-11-28T09:00:00Z"}
//
// (no "id": nothing was charged). A charge with that key recorded later
// completes as "voided", never approved, with voided_at set to the time of the
// first such void request, which can be earlier than its created_at. A charge
// the provider declines stays "declined" either way, so that the outcome does
// not depend on whether the void or the charge came first. This is how the
// checkout makes sure that a shopper it gave up on is never charged.
//
// GET /charges answers 200 OK with every recorded charge, ordered by
// created_at then id:
//
//	{"charges": [{"id": "ch_00000001", ...}, ...]}
//
// GET /healthz answers 200 OK with {"status": "ok"}.
//
// Any other path answers 404 Not Found; a known path with another method
// answers 405 Method Not Allowed with an Allow header. GET endpoints also
// accept HEAD.
//
// # Durable books
//
// With [Config].DataDir the server keeps its books in a journal,
// journal.jsonl in that directory: one JSON line per change, appended before
// the change is answered or seen by any other request.
//
//	{"op": "charge", "charge": {"id": "ch_00000001", "key": "co-42-1", ...}}
//	{"op": "void", "key": "co-42-1", "at": "2025-11-28T09:00:01Z"}
//
// A "charge" line is a charge as it was recorded: approved, declined, or
// voided by an earlier void. A "void" line is a void that changed the books:
// an approved charge voided, or a tombstone left; a void that changes
// nothing writes nothing.
//
// [NewServer] replays the journal, so that a server started on the
// directory of one that was killed keeps its promises: a key already charged
// answers 200 with the same charge, a voided charge stays voided, a
// tombstone still voids the charge that comes after it, GET /charges lists
// every charge answered before the crash, and ids go on after the last one.
// A charge still waiting or processing when the process died was never
// answered and is not in the books, as with a provider that crashed before
// committing: a resend with its key is charged afresh, with the same drawn
// latency and decision.
//
// A process killed in the middle of a write leaves at most a torn last line,
// one without its newline: the replay ignores it, logs a warning and cuts it
// off. Any other line that cannot be replayed is a [*JournalError] naming the
// file and the line, and the server does not start. A change that cannot be
// written answers 500 and is not made.
//
// Writes reach the kernel's page cache, which outlives a killed process;
// [Config].Sync also flushes each one to the disk, for the books to survive a
// crash of the machine. One server at a time may use a directory.
//
// # Client
//
// [Client] calls the API. It does not retry: the checkout decides when to
// retry, which is safe because every charge carries an idempotency key.
// Errors that wrap [ErrRejected] are not worth retrying with the same request;
// any other error (a 5xx, 408 or 429 answer, a transport failure, a context
// deadline) may be retried with the same key.
package payment
