//go:build race

package gameday_test

// raceDetector: this test binary was built with -race, which makes the
// runner's own code (its load generator and embedded Toxiproxy) several
// times slower; see uninstrumented.
const raceDetector = true
