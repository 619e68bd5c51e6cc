// Package breakers guards a call to a dependency (payment, Redis, …) with a
// bulkhead, a circuit breaker and a deadline, in that order, and keeps the
// breaker's state changes for the runner to watch.
//
// # Order: bulkhead → breaker → deadline
//
// [Guard.Do] first takes a bulkhead slot without waiting: when
// [Settings.MaxConcurrent] calls are already in flight it refuses at once with
// [ErrBulkheadFull], and the breaker's counts are not touched, because a full
// bulkhead says nothing new about the dependency. It then asks the breaker
// (sony/gobreaker v2): when open, or half-open with its probes already in
// flight, Do refuses with [ErrOpen] without calling fn. Last, fn runs on its own
// goroutine under a deadline derived from the caller's context
// ([Settings.Timeout], or [Settings.ProbeTimeout] for a half-open probe). Do
// returns when fn returns or when that deadline passes, whichever comes first,
// even if fn ignores its context; the bulkhead slot is given back only when fn
// has really returned, so the bulkhead bounds real goroutines, not callers.
//
// With [Settings.Inline], for a fn that returns by its context's deadline
// (a go-redis client with ContextTimeoutEnabled, an HTTP request made with
// the context), fn runs on the caller's goroutine instead: the same
// deadline at less than half the cost, since no goroutine is started and
// no thread woken to hand the result back. Do then returns only when fn
// does, so a caller who leaves early is answered when fn returns, not at
// once. The reference checkout guards its calls this way.
//
// # Outcomes
//
//   - fn returns nil: a success.
//   - The guard's own deadline passes first: Do returns an error wrapping
//     [ErrTimeout] and the call is a failure, whatever [Settings.IsFailure]
//     says.
//   - The caller's context ends first (cancelled, or its own deadline passed,
//     including a caller deadline earlier than the guard's): the shopper left.
//     Do returns an error wrapping the caller's ctx.Err() (so errors.Is with
//     context.Canceled or context.DeadlineExceeded works) and the call is
//     neither a success nor a failure. ErrTimeout is never wrapped together with
//     context.DeadlineExceeded, so the two causes stay apart: DeadlineExceeded
//     means the caller's deadline, ErrTimeout the guard's. Which deadline fired
//     first is read from the context's cause, not guessed from the clock.
//   - fn returns an error wrapping ErrBulkheadFull (a nested guard refused):
//     not counted, the dependency was not reached.
//   - fn returns any other error: a failure if IsFailure says so (by default
//     always), otherwise a success, because the dependency did answer (a
//     declined card proves that payment is up).
//
// Errors from fn are returned unchanged; errors made by the guard start with
// the dependency's name.
//
// # gobreaker traps and how this package avoids them
//
//   - gobreaker runs OnStateChange while holding its own lock, so a callback
//     that calls back into the breaker deadlocks. Here the callback only stamps
//     the time with [Settings.Now] and appends to a slice under the Guard's own
//     mutex; [Guard.Transitions] reads under that mutex alone, and
//     [Guard.State] takes gobreaker's lock alone, never both. (So Settings.Now
//     must not call the Guard.)
//   - gobreaker's half-open state has no time limit: one hung probe keeps it
//     half-open and every other call is refused. Here a probe runs under
//     [Settings.ProbeTimeout]; when it passes, the probe counts as a failure and
//     the breaker reopens, so the next probe follows after [Settings.OpenFor].
//   - gobreaker counts a cancelled context as a failure unless told otherwise.
//     Here the caller leaving is reported to gobreaker as an excluded outcome
//     (Settings.IsExcluded), so a crowd of impatient shoppers cannot open the
//     breaker, and a probe whose caller left frees its half-open slot.
//
// gobreaker reads time.Now itself, so OpenFor and Interval run on the real
// clock; Settings.Now only stamps [Transition.At]. gobreaker moves from open to
// half-open lazily, when it is next asked, so the open → half-open transition is
// stamped when it is first observed (by Do or State), not exactly OpenFor after
// opening.
//
// fn runs on a goroutine of its own: a panic in fn is not recovered and ends
// the program, as in any goroutine. An inline fn's panic goes on up to the
// caller, after its bulkhead slot is freed and the call counted as a
// failure. The package does no logging.
package breakers
