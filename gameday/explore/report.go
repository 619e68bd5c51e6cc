package explore

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Markdown writes the search's report: its findings, each with what it
// broke, its witnesses, how often it failed before and after shrinking and
// the command that replays it; its trials in one line each; and the
// coverage table, dependency and family by sale phase, each cell the
// number of faults tried there ("–": none), so that a search that found
// nothing says what it did and did not try.
func (r *Result) Markdown(w io.Writer, sp Space) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# gameday explore, seed %d\n\n", r.Seed)
	fmt.Fprintf(&b, "%d trials, %d findings.", len(r.Trials), len(r.Findings))
	if r.Stopped != "" {
		fmt.Fprintf(&b, " Stopped: %s.", r.Stopped)
	}
	b.WriteString("\n\n## Findings\n\n")
	if len(r.Findings) == 0 {
		b.WriteString("None: no trial broke the books. What was tried is in the coverage table below; what explore cannot find is in docs/explore.md.\n")
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "### %s\n\n", f.File)
		fmt.Fprintf(&b, "- broke: %s (checkout ids %s)\n", strings.Join(f.Broken, ", "), strings.Join(f.Witnesses, ", "))
		fmt.Fprintf(&b, "- found by trial %d with %d faults; shrunk to %d in %d steps\n", f.Trial, len(f.Found.Faults), len(f.Shrunk.Faults), len(f.Steps))
		fmt.Fprintf(&b, "- failed in %d of %d replays before shrinking, %d of %d after\n", f.Before[0], f.Before[1], f.After[0], f.After[1])
		fmt.Fprintf(&b, "- replay: `gameday run %s`\n\n", f.File)
	}
	b.WriteString("## Trials\n\n| trial | faults | verdict | broke |\n| ---: | --- | --- | --- |\n")
	for _, t := range r.Trials {
		var fs []string
		for _, f := range t.Schedule.Faults {
			fs = append(fs, fmt.Sprintf("%s on %s at %s for %s (%s, ×%g)", f.Family, f.Target, f.At, f.For, f.Phase, f.Intensity))
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", t.Schedule.Trial, strings.Join(fs, "; "), t.Verdict, strings.Join(t.Broken, ", "))
	}
	b.WriteString("\n## Coverage\n\nFaults tried, by dependency and family (rows) and the phase of the sale they began in (columns); – is never.\n\n| dependency | family |")
	var phases []string
	for _, n := range PhaseNames {
		if slices.ContainsFunc(sp.Phases, func(p Phase) bool { return p.Name == n }) {
			phases = append(phases, n)
		}
	}
	for _, p := range phases {
		fmt.Fprintf(&b, " %s |", p)
	}
	b.WriteString("\n| --- | --- |" + strings.Repeat(" ---: |", len(phases)) + "\n")
	for _, t := range sp.Targets {
		for _, fam := range sp.Families {
			fmt.Fprintf(&b, "| %s | %s |", t, fam)
			for _, p := range phases {
				if n := r.Coverage[CoverKey{t, fam, p}]; n > 0 {
					fmt.Fprintf(&b, " %d |", n)
				} else {
					b.WriteString(" – |")
				}
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
