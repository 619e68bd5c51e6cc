package explore

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"
)

// reportView is what both reports show: the findings, the trials and the
// coverage table, each cell the number of faults that acted there (0:
// none).
type reportView struct {
	Seed     uint64
	Trials   int
	Stopped  string
	Findings []Finding
	Tried    []triedRow
	Phases   []string
	Coverage []coverRow
	// Strategy and Corpus say how the trials were drawn; Requests what
	// each dependency was seen to receive, by phase.
	Strategy string
	Corpus   int
	Requests []requestRow
}

// requestRow is one kind of request a dependency received in some trial,
// and the phases it was seen in.
type requestRow struct {
	Target, Kind string
	Phases       []bool
}

type triedRow struct {
	Trial   int
	Faults  string
	Verdict string
	Broke   string
}

type coverRow struct {
	Target, Family string
	Cells          []int
}

func (r *Result) view(sp Space) reportView {
	v := reportView{Seed: r.Seed, Trials: len(r.Trials), Stopped: r.Stopped, Findings: r.Findings, Strategy: r.Strategy, Corpus: r.Corpus}
	if v.Strategy == "" {
		v.Strategy = StrategyRandom
	}
	seen := map[[2]string]map[string]bool{}
	for _, t := range r.Trials {
		faults := faultsText(t.Schedule, t.Idle)
		if t.Schedule.From != "" {
			faults += "; from " + t.Schedule.From
		}
		v.Tried = append(v.Tried, triedRow{t.Schedule.Trial, faults, string(t.Verdict), strings.Join(t.Broken, ", ")})
		for dep, byPhase := range t.Observed.Kinds {
			for ph, ks := range byPhase {
				for _, k := range ks {
					key := [2]string{dep, k}
					if seen[key] == nil {
						seen[key] = map[string]bool{}
					}
					seen[key][ph] = true
				}
			}
		}
	}
	for _, n := range PhaseNames {
		if slices.ContainsFunc(sp.Phases, func(p Phase) bool { return p.Name == n }) {
			v.Phases = append(v.Phases, n)
		}
	}
	keys := slices.SortedFunc(maps.Keys(seen), func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	for _, k := range keys {
		row := requestRow{Target: k[0], Kind: k[1]}
		for _, p := range v.Phases {
			row.Phases = append(row.Phases, seen[k][p])
		}
		v.Requests = append(v.Requests, row)
	}
	for _, t := range sp.Targets {
		for _, fam := range sp.Families {
			if !slices.Contains(sp.TargetsOf(fam), t) {
				continue // a process family on a dependency without a handle for it: never drawn there
			}
			row := coverRow{Target: t, Family: fam}
			for _, p := range v.Phases {
				row.Cells = append(row.Cells, r.Coverage[CoverKey{t, fam, p}])
			}
			v.Coverage = append(v.Coverage, row)
		}
	}
	return v
}

// faultsText is schedule s's faults in one line, as the report gives
// them, those named in idle marked as having acted on no request.
func faultsText(s Schedule, idle []string) string {
	var fs []string
	for i, f := range s.Faults {
		what := []string{f.Phase}
		if fam, _ := FamilyByName(f.Family); fam.intense() {
			what = append(what, fmt.Sprintf("×%g", f.Intensity))
		}
		if f.Kind != "" {
			what = append(what, "aimed at "+f.Kind)
		}
		if slices.Contains(idle, s.faultName(i)) {
			what = append(what, "acted on no request: not counted in the coverage")
		}
		fs = append(fs, fmt.Sprintf("%s on %s at %s for %s (%s)", f.Family, f.Target, f.At, f.For, strings.Join(what, ", ")))
	}
	if len(fs) == 0 {
		return "none"
	}
	return strings.Join(fs, "; ")
}

// Markdown writes the search's report: its findings, each with what it
// broke, its witnesses, how often it failed before shrinking and as
// written, and the command that replays it; its trials in one line each;
// and the coverage table, dependency and family by sale phase, each cell
// the number of faults tried there that acted ("–": none), so that a
// search that found nothing says what it did and did not try.
func (r *Result) Markdown(w io.Writer, sp Space) error {
	v := r.view(sp)
	var b strings.Builder
	fmt.Fprintf(&b, "# gameday explore, seed %d\n\n", v.Seed)
	fmt.Fprintf(&b, "%d trials, %d findings; %s.", v.Trials, len(v.Findings), strategyText(v))
	if v.Stopped != "" {
		fmt.Fprintf(&b, " Stopped: %s (go on with -resume).", v.Stopped)
	}
	b.WriteString("\n\n## Findings\n\n")
	if len(v.Findings) == 0 {
		b.WriteString("None: no trial broke the books. What was tried is in the coverage table below; what explore cannot find is in docs/explore.md.\n")
	}
	for _, f := range v.Findings {
		switch {
		case f.Unfinished:
			fmt.Fprintf(&b, "### trial %d: %s\n\n", f.Trial, unfinishedTitle)
			fmt.Fprintf(&b, "- broke: %s (%s)\n", strings.Join(f.Broken, ", "), WitnessText(f.Witnesses))
			fmt.Fprintf(&b, "- %s\n", unfinishedText)
			fmt.Fprintf(&b, "- its faults: %s\n\n", faultsText(f.Found, nil))
			continue
		case f.Rare:
			fmt.Fprintf(&b, "### trial %d: seen, too rare to shrink\n\n", f.Trial)
			fmt.Fprintf(&b, "- broke: %s (%s)\n", strings.Join(f.Broken, ", "), WitnessText(f.Witnesses))
			fmt.Fprintf(&b, "- failed again in %d of %d replays, fewer than a step needs: not shrunk, no scenario written; the books were wrong all the same\n", f.Before[0], f.Before[1])
			fmt.Fprintf(&b, "- its faults: %s\n\n", faultsText(f.Found, nil))
			continue
		}
		fmt.Fprintf(&b, "### %s\n\n", f.File)
		fmt.Fprintf(&b, "- broke: %s (%s)\n", strings.Join(f.Broken, ", "), WitnessText(f.Witnesses))
		if t := aimedAt(f); t != "" {
			fmt.Fprintf(&b, "- %s\n", t)
		}
		fmt.Fprintf(&b, "- found by trial %d with %d faults; shrunk to %d in %d steps\n", f.Trial, len(f.Found.Faults), len(f.Shrunk.Faults), len(f.Steps))
		fmt.Fprintf(&b, "- failed in %d of %d replays before shrinking; as written, in %d of %d runs, breaking %s\n", f.Before[0], f.Before[1], f.After[0], f.After[1], orNone(f.Reproduces))
		fmt.Fprintf(&b, "- replay: `gameday run %s`\n\n", f.File)
	}
	b.WriteString("## Trials\n\n| trial | faults | verdict | broke |\n| ---: | --- | --- | --- |\n")
	for _, t := range v.Tried {
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", t.Trial, t.Faults, t.Verdict, t.Broke)
	}
	b.WriteString("\n## Coverage\n\nFaults tried, by dependency and family (rows) and the phase of the sale they began in (columns); – is never. A fault that acted on no request is not counted.\n\n| dependency | family |")
	for _, p := range v.Phases {
		fmt.Fprintf(&b, " %s |", p)
	}
	b.WriteString("\n| --- | --- |" + strings.Repeat(" ---: |", len(v.Phases)) + "\n")
	for _, row := range v.Coverage {
		fmt.Fprintf(&b, "| %s | %s |", row.Target, row.Family)
		for _, n := range row.Cells {
			if n > 0 {
				fmt.Fprintf(&b, " %d |", n)
			} else {
				b.WriteString(" – |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Requests the system sent\n\nThe kinds of request each dependency received through its proxy's relay, and the phases they were seen in, over every trial: what aimed faults are drawn at.\n\n")
	if len(v.Requests) == 0 {
		b.WriteString("None seen: no dependency's proxy had a relay behind it (a stock Toxiproxy), or the system sent nothing.\n")
	} else {
		b.WriteString("| dependency | kind |")
		for _, p := range v.Phases {
			fmt.Fprintf(&b, " %s |", p)
		}
		b.WriteString("\n| --- | --- |" + strings.Repeat(" :---: |", len(v.Phases)) + "\n")
		for _, row := range v.Requests {
			fmt.Fprintf(&b, "| %s | %s |", row.Target, strings.ReplaceAll(row.Kind, "|", "\\|"))
			for _, on := range row.Phases {
				if on {
					b.WriteString(" ✓ |")
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

// strategyText says how a search's trials were drawn.
func strategyText(v reportView) string {
	if v.Strategy == StrategyGuided {
		return fmt.Sprintf("guided: %d schedules in the corpus at the end (docs/explore.md#guided-search)", v.Corpus)
	}
	return "random: every trial drawn blind from the seed"
}

// What the reports say of an unfinished finding.
const (
	unfinishedTitle = "stopped before its finding was made"
	unfinishedText  = "the search was stopped while it was replayed, shrunk or confirmed: not shrunk, no scenario written; the books were wrong all the same, and -resume runs the trial again to make its finding"
)

// aimedAt says what finding f was shrunk toward when an earlier finding
// reproduces some of what its trial broke; "" when it was all new.
func aimedAt(f Finding) string {
	if len(f.New) == 0 || len(f.New) == len(f.Broken) {
		return ""
	}
	return fmt.Sprintf("shrunk toward %s: an earlier finding reproduces the others", strings.Join(f.New, ", "))
}

// HTML writes the report Markdown writes as one page with no outside
// resources, the cells of the coverage table never tried marked.
func (r *Result) HTML(w io.Writer, sp Space) error {
	return htmlReport.Execute(w, r.view(sp))
}

var htmlReport = template.Must(template.New("explore").Funcs(template.FuncMap{
	"join":            strings.Join,
	"witnesses":       WitnessText,
	"faults":          func(s Schedule) string { return faultsText(s, nil) },
	"orNone":          orNone,
	"aimedAt":         aimedAt,
	"unfinishedTitle": func() string { return unfinishedTitle },
	"unfinishedText":  func() string { return unfinishedText },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="gameday">
<title>gameday explore, seed {{.Seed}}: {{len .Findings}} findings</title>
<style>
body { font-family: "DejaVu Sans", system-ui, sans-serif; color: #1b1b1b; margin: 0; line-height: 1.45; }
main { max-width: 1080px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 1.6rem; margin: 0 0 .4rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .6rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; }
table { border-collapse: collapse; width: 100%; font-size: .93rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
th { background: #f4f4f4; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.never { color: #b42318; background: #fdf0ef; text-align: right; }
.broken { color: #b42318; font-weight: 700; }
code { font-size: .9rem; }
</style>
</head>
<body>
<main>
<h1>gameday explore, seed {{.Seed}}</h1>
<p>{{.Trials}} trials, {{len .Findings}} findings; {{if eq .Strategy "guided"}}guided: {{.Corpus}} schedules in the corpus at the end{{else}}random: every trial drawn blind from the seed{{end}}.{{if .Stopped}} Stopped: {{.Stopped}} (go on with <code>-resume</code>).{{end}}</p>
<h2>Findings</h2>
{{- if not .Findings}}
<p>None: no trial broke the books. What was tried is in the coverage table below; what explore cannot find is in docs/explore.md.</p>
{{- end}}
{{- range .Findings}}
{{- if .Unfinished}}
<h3>trial {{.Trial}}: {{unfinishedTitle}}</h3>
<ul>
<li>broke: <span class="broken">{{join .Broken ", "}}</span> ({{witnesses .Witnesses}})</li>
<li>{{unfinishedText}}</li>
<li>its faults: {{faults .Found}}</li>
</ul>
{{- else if .Rare}}
<h3>trial {{.Trial}}: seen, too rare to shrink</h3>
<ul>
<li>broke: <span class="broken">{{join .Broken ", "}}</span> ({{witnesses .Witnesses}})</li>
<li>failed again in {{index .Before 0}} of {{index .Before 1}} replays, fewer than a step needs: not shrunk, no scenario written; the books were wrong all the same</li>
<li>its faults: {{faults .Found}}</li>
</ul>
{{- else}}
<h3>{{.File}}</h3>
<ul>
<li>broke: <span class="broken">{{join .Broken ", "}}</span> ({{witnesses .Witnesses}})</li>
{{- with aimedAt .}}
<li>{{.}}</li>
{{- end}}
<li>found by trial {{.Trial}} with {{len .Found.Faults}} faults; shrunk to {{len .Shrunk.Faults}} in {{len .Steps}} steps</li>
<li>failed in {{index .Before 0}} of {{index .Before 1}} replays before shrinking; as written, in {{index .After 0}} of {{index .After 1}} runs, breaking <span class="broken">{{orNone .Reproduces}}</span></li>
<li>replay: <code>gameday run {{.File}}</code></li>
</ul>
{{- end}}
{{- end}}
<h2>Trials</h2>
<table>
<tr><th class="num">trial</th><th>faults</th><th>verdict</th><th>broke</th></tr>
{{- range .Tried}}
<tr><td class="num">{{.Trial}}</td><td>{{.Faults}}</td><td>{{.Verdict}}</td><td class="broken">{{.Broke}}</td></tr>
{{- end}}
</table>
<h2>Coverage</h2>
<p>Faults tried, by dependency and family (rows) and the phase of the sale they began in (columns); a marked cell was never tried. A fault that acted on no request is not counted.</p>
<table>
<tr><th>dependency</th><th>family</th>{{range .Phases}}<th class="num">{{.}}</th>{{end}}</tr>
{{- range .Coverage}}
<tr><td>{{.Target}}</td><td>{{.Family}}</td>{{range .Cells}}{{if .}}<td class="num">{{.}}</td>{{else}}<td class="never">–</td>{{end}}{{end}}</tr>
{{- end}}
</table>
<h2>Requests the system sent</h2>
<p>The kinds of request each dependency received through its proxy's relay, and the phases they were seen in, over every trial: what aimed faults are drawn at.</p>
{{- if .Requests}}
<table>
<tr><th>dependency</th><th>kind</th>{{range .Phases}}<th>{{.}}</th>{{end}}</tr>
{{- range .Requests}}
<tr><td>{{.Target}}</td><td><code>{{.Kind}}</code></td>{{range .Phases}}{{if .}}<td>✓</td>{{else}}<td class="never">–</td>{{end}}{{end}}</tr>
{{- end}}
</table>
{{- else}}
<p>None seen: no dependency's proxy had a relay behind it (a stock Toxiproxy), or the system sent nothing.</p>
{{- end}}
</main>
</body>
</html>
`))

// orNone is a list of invariants in a sentence: "none" when empty.
func orNone(invariants []string) string {
	if len(invariants) == 0 {
		return "none"
	}
	return strings.Join(invariants, ", ")
}

// WitnessText names the checkouts that broke a finding's invariants, or
// says that none can be: the stock invariants are counts, not kept per
// order, and the trial's verdict (its run.json) names the shoppers to
// start with instead.
func WitnessText(ids []string) string {
	if len(ids) == 0 {
		return "no checkout to name: the stock is counted, not kept per order; the trial's run.json names the shoppers to start with (leads)"
	}
	return "checkout ids " + strings.Join(ids, ", ")
}
