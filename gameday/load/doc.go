// Package load is gameday's open-model flash-sale load generator.
//
// # The open model
//
// Shoppers arrive on a schedule that does not depend on how the checkout
// answers, like k6's ramping-arrival-rate executor: a plan is a list of
// stages, each ramping the arrival rate linearly from the previous stage's
// target (0 before the first) to its own over its duration. Arrival i (from
// 0) is due when the integral of the rate reaches i+1, so a stage holding
// 1,000/s for 2 s gives 2,000 arrivals 1 ms apart, the last at its end, and
// a ramp from 0 has its first arrival well after its beginning (at
// sqrt(2·duration/target)). [Schedule] computes every arrival's offset from
// the plan alone, in closed form per stage.
//
// [Run] sleeps until each arrival's absolute due time (start + offset), never
// by accumulating sleeps, so a slow wake-up makes that one arrival late and
// does not push back the ones after it. A closed-model generator (a fixed set
// of users each waiting for its answer before the next request) slows down
// with the system it measures and hides exactly the queueing a flash sale
// causes; an open model keeps arriving.
//
// # Bounded, and nothing hidden
//
// At most [Plan.MaxShoppers] shoppers are in flight at once, each on its own
// goroutine of a pool that grows as the sale needs it and shrinks after it,
// and the report's shopper records are allocated before the sale starts, so a
// run's memory is bounded and known in advance. An arrival that finds
// MaxShoppers shoppers busy is not queued and not started late: it is
// counted as dropped and appears in the report with the outcome "dropped". Every started
// shopper's lateness (actual start minus scheduled start) is recorded, and
// the report gives its p50, p99 and maximum. Latency is measured from the
// scheduled start, as wrk2 does, not from when the request happened to be
// sent: a generator that falls behind cannot make the checkout look faster.
//
// # Shoppers
//
// A shopper sends its first attempt at once, with a deadline of its scheduled
// start plus [Plan.Patience] (absolute, in the request, so the checkout can
// refuse to charge a shopper who has left). When told to come back (503, or
// 409 in_progress, with Retry-After) it waits the given time spread by
// [Plan.RetryJitter] and tries again with the same checkout id, unless that
// wait would take it past its deadline (it gives up) or it has no retries
// left (unavailable). When an answer carries a waiting-room token (the
// Waiting-Room-Token header of a checkout in a fair admission mode), the
// shopper keeps the latest one and sends it back on every later attempt, as
// a browser keeps a cookie. Every shopper ends with exactly one outcome; see
// [Shopper.Outcome]. An answer is taken as it comes, even after the
// deadline: a confirmation that arrives late is still a purchase, and the
// checkout's books, not the shopper, say whether it charged too late.
//
// # Determinism
//
// The same plan gives the same schedule and the same shopper choices
// (session or guest, retry jitter draws): each shopper draws from its own
// PCG generator seeded by (Plan.Seed, index), so the choices do not depend on
// which goroutine runs the shopper or when. [Shoppers] returns them.
package load
