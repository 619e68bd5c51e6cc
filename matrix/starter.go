package matrix

import (
	"fmt"
	"strings"

	"github.com/gameday-dev/gameday/scenarios"
)

const starterHeader = `# Resiliency matrix of the checkout: for every dependency and failure mode,
# what shoppers experience, how fast it recovers, and when that was last
# proven. Format: https://github.com/gameday-dev/gameday/blob/main/docs/matrix.md
#
# gameday writes each row's "last:" block (gameday run --matrix FILE,
# gameday drill); everything else is yours. Replace every TODO, remove the
# rows you do not need, and mark a failure your checkout cannot handle yet
# as "status: known_gap". "gameday matrix check" fails when a promise
# fails, a drill is overdue (a row that never ran is), or a known gap
# starts passing.
`

// Starter returns a starter matrix with one row per scenario, in the
// order given, each under a comment telling the scenario's story: status
// promise, cadence weekly, the expectation from the first line of the
// scenario's description, the recovery objective from its breaker_closes
// promise (left out when it has none), and owner and runbook set to TODO.
// A scenario from the catalogue is named by its name, any other by its
// file. The result parses.
func Starter(scs []*scenarios.Scenario) ([]byte, error) {
	var b strings.Builder
	b.WriteString(starterHeader)
	fmt.Fprintf(&b, "version: %d\nrows:\n", Version)
	for i, s := range scs {
		if i > 0 {
			b.WriteString("\n")
		}
		if lines := storyLines(s.Description); len(lines) > 0 {
			for _, l := range lines {
				b.WriteString(strings.TrimRight("  # "+l, " ") + "\n")
			}
		}
		expectation := s.Summary()
		if expectation == "" {
			expectation = starterExpectation(s.Matrix.Dependency, s.Matrix.Failure)
		}
		ref := s.Name
		if s.File != "" && !strings.HasPrefix(s.File, "catalogue:") {
			ref = s.File
		}
		fmt.Fprintf(&b, "  - dependency: %s\n", quoteScalar(s.Matrix.Dependency))
		fmt.Fprintf(&b, "    failure: %s\n", quoteScalar(s.Matrix.Failure))
		fmt.Fprintf(&b, "    expectation: %s\n", quoteScalar(expectation))
		if within := closesWithin(s); within != "" {
			fmt.Fprintf(&b, "    recovery_objective: %s  # the scenario's breaker_closes promise\n", within)
		}
		b.WriteString("    runbook: TODO  # TODO: link the runbook for this failure\n")
		b.WriteString("    owner: TODO    # TODO: the team that owns this row\n")
		b.WriteString("    cadence: weekly\n")
		fmt.Fprintf(&b, "    scenario: %s\n", quoteScalar(ref))
		b.WriteString("    status: promise\n")
	}
	out := []byte(b.String())
	if _, err := Parse("starter matrix", out); err != nil {
		return nil, fmt.Errorf("write starter matrix: %w", err)
	}
	return out, nil
}

// storyLines returns the description after its first line, one comment
// line each.
func storyLines(desc string) []string {
	var out []string
	first := true
	for l := range strings.Lines(desc) {
		l = strings.TrimSpace(l)
		if first {
			if l != "" {
				first = false
			}
			continue
		}
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// closesWithin returns the `within` of the scenario's first breaker_closes
// promise, "" when it has none.
func closesWithin(s *scenarios.Scenario) string {
	for _, e := range s.Expect {
		if e.BreakerCloses != nil && e.BreakerCloses.Within > 0 {
			return e.BreakerCloses.Within.String()
		}
	}
	return ""
}

// starterExpectation is a row's expectation to be written by its owner,
// for a scenario whose description gives none: what shoppers experience
// when the dependency fails this way, or, for a baseline (dependency
// none), in a sale with nothing failing.
func starterExpectation(dependency, failure string) string {
	if dependency == "none" || dependency == "" {
		return "TODO: what shoppers experience in a sale with no fault (the baseline)"
	}
	return "TODO: what shoppers experience when " + dependency + " fails this way (" + failure + ")"
}
