package breakers

import "github.com/sony/gobreaker/v2"

// Counts exposes the breaker's counts to the tests, which check that refused
// and excluded calls leave them alone.
func Counts(g *Guard) gobreaker.Counts { return g.cb.Counts() }
