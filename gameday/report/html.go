package report

import (
	"fmt"
	"html/template"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/gameday/flash"
	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// page is what the HTML template renders.
type page struct {
	R            *runrecord.Record
	Verdict      verdictView
	Started      string
	Finished     string
	Scales       string
	Load         []fact
	Outcomes     string
	Charts       []chartView
	Pods         []podView
	NoCharts     string
	Expectations []checkView
	Invariants   []checkView
	ExpectHeld   string
	InvHeld      string
	Breakers     []breakerView
	Faults       []faultView
	Ledger       []fact
	Flash        []flashView
	FlashNote    string
	System       string
	Unmatched    []unmatchedView
	Host         string
}

// flashView is one flash-sale figure beside its predicted range.
type flashView struct {
	Key, Unit, Meaning, Observed, Mean, Range string
	Predicted, Outside                        bool
}

type fact struct{ Name, Value string }

// verdictView is the verdict as a badge: a symbol and a word as well as
// a colour.
type verdictView struct {
	Class, Symbol, Word string
}

// checkView is one row of the expectations or invariants table.
type checkView struct {
	Promise, Window, Observed string
	Held, NotChecked          bool
	Needs                     string
	// Unjudged says why an invariant's count was shown, not judged.
	Unjudged string
}

// unmatchedView is one kind of answer no rule understood.
type unmatchedView struct {
	Step, Code, Count, ContentType, Sample string
}

type breakerView struct {
	Dependency, Transitions, OpenedAfter, ClosedAfter string
}

type faultView struct {
	Name, Target, Kind, Start, End, Error string
	// Requests says what a request-aware toxic did; "" for the others.
	Requests string
}

func verdictOf(v runrecord.Verdict) verdictView {
	switch v {
	case runrecord.VerdictPass:
		return verdictView{"pass", "✓", "PASS"}
	case runrecord.VerdictFail:
		return verdictView{"fail", "✗", "FAIL"}
	case runrecord.VerdictInconclusive:
		return verdictView{"inconclusive", "?", "INCONCLUSIVE"}
	case runrecord.VerdictError:
		return verdictView{"error", "!", "ERROR"}
	}
	if v == "" {
		v = "unknown"
	}
	return verdictView{"error", "?", strings.ToUpper(string(v))}
}

func checks(rs []runrecord.ExpectationResult) ([]checkView, string) {
	held, notChecked, unjudged := 0, 0, 0
	out := make([]checkView, 0, len(rs))
	for _, e := range rs {
		if e.NotChecked {
			notChecked++
		}
		if e.Unjudged != "" {
			unjudged++
		} else if e.Held {
			held++
		}
		out = append(out, checkView{Promise: e.Promise, Window: e.Window, Observed: e.Observed + e.ExamplesText(), Held: e.Held, NotChecked: e.NotChecked, Needs: e.Needs, Unjudged: e.Unjudged})
	}
	s := fmt.Sprintf("%d of %d held", held, len(rs)-notChecked-unjudged)
	if notChecked > 0 {
		s += fmt.Sprintf(", %d not checked", notChecked)
	}
	if unjudged > 0 {
		s += fmt.Sprintf(", %d not judged", unjudged)
	}
	return out, s
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000 UTC")
}

func optMS(v *int64) string {
	if v == nil {
		return "–"
	}
	return seconds(*v)
}

func newPage(r *runrecord.Record) page {
	p := page{
		R:        r,
		Verdict:  verdictOf(r.Verdict),
		Started:  stamp(r.StartedAt),
		Finished: stamp(r.FinishedAt),
		Scales: fmt.Sprintf("rate ×%s, time ×%s",
			strconv.FormatFloat(r.RateScale, 'f', -1, 64), strconv.FormatFloat(r.TimeScale, 'f', -1, 64)),
	}
	l := r.Load
	p.Load = []fact{
		{"Arrivals", fmt.Sprintf("%d scheduled, %d started, %d dropped", l.Scheduled, l.Started, l.Dropped)},
		{"Late starts", fmt.Sprintf("p50 %s ms, p99 %s ms, max %s ms", ms(l.LateP50MS), ms(l.LateP99MS), ms(l.LateMaxMS))},
		{"Checkout p95", ms(l.CheckoutP95MS) + " ms (from the scheduled start)"},
		{"Load duration", seconds(l.DurationMS)},
	}
	var outs []string
	for _, n := range outcomesByCount(r.Outcomes) {
		outs = append(outs, fmt.Sprintf("%s %d", n, r.Outcomes[n]))
	}
	p.Outcomes = orNone(strings.Join(outs, " · "))
	if v := r.VisitsText(); v != "" {
		p.Load = append(p.Load, fact{"Visits (journeys that do not buy)", v})
	}

	if r.Series.Seconds > 0 {
		ts := newTimeScale(r)
		p.Charts = []chartView{trafficChart(r, ts), latencyChart(r, ts), breakerChart(r, ts)}
		p.Pods = podViews(r, ts)
	} else {
		p.NoCharts = "No load was driven, so there is nothing to chart."
	}
	p.Expectations, p.ExpectHeld = checks(r.Expectations)
	p.Invariants, p.InvHeld = checks(r.InvariantChecks)
	p.System = r.System
	for _, u := range r.Unmatched {
		step := u.Step
		if u.Request != "" {
			step += " (" + u.Request + ")"
		}
		p.Unmatched = append(p.Unmatched, unmatchedView{Step: step, Code: fmt.Sprint(u.Code), Count: fmt.Sprint(u.Count), ContentType: u.ContentType, Sample: u.Sample})
	}

	deps := make([]string, 0, len(r.Breakers))
	for d := range r.Breakers {
		deps = append(deps, d)
	}
	sort.Strings(deps)
	for _, d := range deps {
		b := r.Breakers[d]
		p.Breakers = append(p.Breakers, breakerView{
			Dependency: d, Transitions: strconv.Itoa(len(b.Transitions)),
			OpenedAfter: optMS(b.OpenedAfterMS), ClosedAfter: optMS(b.ClosedAfterMS),
		})
	}
	for _, f := range r.Faults {
		fv := faultView{Name: f.Name, Target: f.Target, Kind: f.Kind,
			Start: seconds(f.StartMS), End: seconds(f.EndMS), Error: faultError(f)}
		if f.Hits != nil {
			fv.Requests = f.Hits.Text()
		}
		if f.Cache != nil {
			fv.Requests = f.Cache.Text()
		}
		p.Faults = append(p.Faults, fv)
	}
	p.Flash, p.FlashNote = flashViews(r.Flash)
	p.Ledger = []fact{
		{"Stock", fmt.Sprintf("%d initial, %d available, %d reserved, %d sold", r.Ledger.Initial, r.Ledger.Available, r.Ledger.Reserved, r.Ledger.Sold)},
		{"Orders", strconv.Itoa(r.Ledger.Orders)},
		{"Charges", fmt.Sprintf("%d approved, %d declined, %d voided", r.Charges.Approved, r.Charges.Declined, r.Charges.Voided)},
	}
	return p
}

// HTML renders the run's report as one self-contained HTML page: inline
// CSS and inline SVG charts, no script, nothing loaded from elsewhere.
// The same record always gives the same bytes.
func HTML(w io.Writer, r *runrecord.Record) error {
	if r == nil {
		return errNilRecord
	}
	if err := pageTemplate.Execute(w, newPage(r)); err != nil {
		return fmt.Errorf("render report.html: %w", err)
	}
	return nil
}

var pageTemplate = template.Must(template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="gameday">
<title>{{.Verdict.Word}} {{.R.Scenario}} — gameday report</title>
<style>
:root { color-scheme: light; }
body { font-family: "DejaVu Sans", system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1b1b1b; background: #fff; margin: 0; line-height: 1.45; }
main { max-width: 1080px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 1.6rem; margin: 0 0 .4rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .6rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; }
.verdict { display: inline-block; font-weight: 700; padding: .25rem .7rem; border-radius: 4px; color: #fff; letter-spacing: .03em; }
.verdict.pass { background: #1a7f37; }
.verdict.fail { background: #b42318; }
.verdict.inconclusive { background: #8a5a00; }
.verdict.error { background: #5b3f8c; }
.reason { margin: .6rem 0 1rem; font-size: 1.05rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1.2rem; margin: 0; }
dl.facts dt { font-weight: 600; color: #444; }
dl.facts dd { margin: 0; }
dl.facts ul { margin: 0; padding-left: 1.2rem; }
figure { margin: 1.2rem 0 1.6rem; }
figcaption { font-size: .92rem; color: #333; margin-bottom: .3rem; }
figcaption strong { display: block; font-size: 1.02rem; color: #111; }
svg.chart { display: block; width: 100%; height: auto; border: 1px solid #e5e5e5; background: #fff; }
.pods { display: grid; grid-template-columns: repeat(auto-fit, minmax(20rem, 1fr)); gap: 1rem; }
details { margin-top: .3rem; font-size: .9rem; }
details table { margin-top: .4rem; }
table { border-collapse: collapse; width: 100%; font-size: .93rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
th { background: #f4f4f4; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.held { color: #1a7f37; font-weight: 700; white-space: nowrap; }
.broken { color: #b42318; font-weight: 700; white-space: nowrap; }
tr.broken-row { background: #fdf0ef; }
.muted { color: #666; }
ul.notes li { margin-bottom: .3rem; }
table + table { margin-top: 1.2rem; }
caption { caption-side: top; text-align: left; color: #555; padding: .2rem 0; font-weight: 600; }
@media print { main { max-width: none; } details { display: none; } }
</style>
</head>
<body>
<main>
<header>
<h1>gameday report: {{.R.Scenario}}</h1>
<p><span class="verdict {{.Verdict.Class}}">{{.Verdict.Symbol}} {{.Verdict.Word}}</span></p>
{{if .R.Reason}}<p class="reason">{{.R.Reason}}</p>{{end}}{{range .R.EmptyKept}}
<p class="reason"><span class="broken">Warning:</span> {{.}}; what the system answered them may be what the verdict counts.</p>{{end}}
<dl class="facts">
<dt>Scenario</dt><dd>{{.R.Scenario}} <span class="muted">({{.R.File}})</span></dd>
<dt>Matrix row</dt><dd>{{.R.Matrix.Dependency}} / {{.R.Matrix.Failure}}</dd>
<dt>Seed</dt><dd>{{.R.Seed}}</dd>
<dt>Scales</dt><dd>{{.Scales}}</dd>
<dt>Started</dt><dd>{{.Started}}</dd>
<dt>Finished</dt><dd>{{.Finished}}</dd>
{{with .System}}<dt>System</dt><dd>{{.}}</dd>
{{end}}<dt>Environment</dt><dd>{{.R.Environment.Kind}}{{with .R.Environment.Redis}}; Redis: {{.}}{{end}}{{with .R.Environment.Toxiproxy}}; Toxiproxy: {{.}}{{end}}{{with .R.Environment.Checkout}}; checkout: {{.}}{{end}}
{{- with .R.Environment.Notes}}<ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}</dd>
{{range .Load}}<dt>{{.Name}}</dt><dd>{{.Value}}</dd>
{{end}}<dt>Outcomes</dt><dd>{{.Outcomes}}</dd>
</dl>
</header>

<section aria-labelledby="h-charts">
<h2 id="h-charts">Over time</h2>
{{with .NoCharts}}<p>{{.}}</p>{{end}}
{{- range .Charts}}
{{template "figure" .}}
{{- end}}
</section>

{{with .Pods}}<section aria-labelledby="h-pods">
<h2 id="h-pods">Pod by pod</h2>
<p class="muted">Each pod's shoppers (those of the shops on it when they arrived), on the same scales side by side.</p>
<div class="pods">
{{- range .}}
<div class="pod">
<h3>{{.Name}} <span class="muted">({{.Shops}})</span></h3>
{{- range .Charts}}
{{template "figure" .}}
{{- end}}
</div>
{{- end}}
</div>
</section>
{{end}}
<section aria-labelledby="h-expect">
<h2 id="h-expect">Expectations <span class="muted">({{.ExpectHeld}})</span></h2>
{{if .Expectations}}<table>
<thead><tr><th scope="col">Promise</th><th scope="col">Window</th><th scope="col">Held</th><th scope="col">Observed</th></tr></thead>
<tbody>
{{range .Expectations}}<tr{{if and (not .Held) (not .NotChecked)}} class="broken-row"{{end}}><td>{{.Promise}}</td><td>{{with .Window}}{{.}}{{else}}–{{end}}</td><td>{{if .NotChecked}}<span class="muted">– not checked</span>{{else if .Held}}<span class="held">✓ held</span>{{else}}<span class="broken">✗ broken</span>{{end}}</td><td>{{.Observed}}</td></tr>
{{end}}</tbody>
</table>{{else}}<p>No expectation was checked.</p>{{end}}
</section>

<section aria-labelledby="h-inv">
<h2 id="h-inv">Invariants <span class="muted">({{.InvHeld}})</span></h2>
{{if .Invariants}}<table>
<thead><tr><th scope="col">Invariant</th><th scope="col">Held</th><th scope="col">Observed</th></tr></thead>
<tbody>
{{range .Invariants}}<tr{{if and (not .Held) (not .NotChecked) (not .Unjudged)}} class="broken-row"{{end}}><td>{{.Promise}}</td><td>{{if .NotChecked}}<span class="muted">– not checked</span>{{else if .Unjudged}}<span class="muted">– not judged: the books were {{.Unjudged}}</span>{{else if .Held}}<span class="held">✓ held</span>{{else}}<span class="broken">✗ broken</span>{{end}}</td><td>{{if .NotChecked}}needs {{.Needs}}{{else}}{{.Observed}}{{end}}</td></tr>
{{end}}</tbody>
</table>{{else}}<p>No invariant was checked.</p>{{end}}
</section>

{{if .Unmatched}}<section aria-labelledby="h-unmatched">
<h2 id="h-unmatched">Answers no rule understood</h2>
<p>Each was counted as an error. Add a rule for it to the system file, or fix the service.</p>
<table>
<thead><tr><th scope="col">Step</th><th scope="col" class="num">Status</th><th scope="col" class="num">Count</th><th scope="col">Content type</th><th scope="col">Sample</th></tr></thead>
<tbody>
{{range .Unmatched}}<tr class="broken-row"><td>{{.Step}}</td><td class="num">{{.Code}}</td><td class="num">{{.Count}}</td><td>{{.ContentType}}</td><td><code>{{.Sample}}</code></td></tr>
{{end}}</tbody>
</table>
</section>{{end}}{{if .R.TransportErrors}}

<section aria-labelledby="h-noanswer">
<h2 id="h-noanswer">Requests that got no answer</h2>
<table>
<thead><tr><th scope="col">Kind</th><th scope="col" class="num">Count</th><th scope="col">The first one's error</th></tr></thead>
<tbody>
{{range .R.TransportErrors}}<tr><td>{{.Kind}}</td><td class="num">{{.Count}}</td><td><code>{{.Sample}}</code></td></tr>
{{end}}</tbody>
</table>
</section>{{end}}

{{if .Flash}}<section aria-labelledby="h-flash">
<h2 id="h-flash">Flash-sale figures</h2>
<p>{{.FlashNote}}</p>
<table>
<thead><tr><th scope="col">Figure</th><th scope="col" class="num">Observed</th><th scope="col" class="num">Predicted mean</th><th scope="col" class="num">Predicted 5th–95th percentile</th><th scope="col">Meaning</th></tr></thead>
<tbody>
{{range .Flash}}<tr{{if .Outside}} class="broken-row"{{end}}><td>{{.Key}} <span class="muted">({{.Unit}})</span></td><td class="num">{{.Observed}}{{if .Outside}} <span class="broken" title="outside the predicted range">✗ outside</span>{{end}}</td><td class="num">{{if .Predicted}}{{.Mean}}{{else}}–{{end}}</td><td class="num">{{if .Predicted}}{{.Range}}{{else}}–{{end}}</td><td>{{.Meaning}}</td></tr>
{{end}}</tbody>
</table>
</section>

{{end}}<section aria-labelledby="h-details">
<h2 id="h-details">Faults, breakers and books</h2>
{{if .Faults}}<table>
<caption>Faults, when they were really in place</caption>
<thead><tr><th scope="col">Fault</th><th scope="col">Target</th><th scope="col">Kind</th><th scope="col">Start</th><th scope="col">End</th><th scope="col">Error</th></tr></thead>
<tbody>
{{range .Faults}}<tr><td>{{.Name}}</td><td>{{.Target}}</td><td>{{.Kind}}{{with .Requests}}<br><span class="muted">{{.}}</span>{{end}}</td><td>{{.Start}}</td><td>{{.End}}</td><td>{{with .Error}}<span class="broken">✗</span> {{.}}{{else}}–{{end}}</td></tr>
{{end}}</tbody>
</table>{{else}}<p>No fault was injected.</p>{{end}}
{{if .Breakers}}<table>
<caption>Breakers</caption>
<thead><tr><th scope="col">Dependency</th><th scope="col" class="num">Transitions</th><th scope="col">Opened after the fault began</th><th scope="col">Closed after the fault ended</th></tr></thead>
<tbody>
{{range .Breakers}}<tr><td>{{.Dependency}}</td><td class="num">{{.Transitions}}</td><td>{{.OpenedAfter}}</td><td>{{.ClosedAfter}}</td></tr>
{{end}}</tbody>
</table>{{end}}
<dl class="facts" style="margin-top:1rem">
{{range .Ledger}}<dt>{{.Name}}</dt><dd>{{.Value}}</dd>
{{end}}</dl>
</section>

<section aria-labelledby="h-notes">
<h2 id="h-notes">Notes</h2>
{{if .R.Notes}}<ul class="notes">{{range .R.Notes}}<li>{{.}}</li>{{end}}</ul>{{else}}<p class="muted">None.</p>{{end}}
</section>
</main>
</body>
</html>
`)).Parse(`{{define "figure"}}<figure aria-labelledby="{{.ID}}-caption">
<figcaption id="{{.ID}}-caption"><strong>{{.Title}}</strong>{{.Caption}}</figcaption>
{{.SVG}}
<details><summary>{{.Title}}: the figures as a table</summary>
<table>
<thead><tr>{{range .Table.Head}}<th scope="col">{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Table.Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
</details>
</figure>{{end}}`))

// flashViews lays out the flash-sale figures beside their prediction.
func flashViews(f *runrecord.Flash) ([]flashView, string) {
	if f == nil {
		return nil, ""
	}
	note := "This drill was not predicted (it has faults, drills a service of your own, or prediction was off)."
	if f.Predicted != nil {
		note = fmt.Sprintf("Predicted by %d simulated runs of the model (gameday predict, seeds from %d). A figure outside its 5th–95th percentile range is marked: one drill lands outside about one time in ten per figure even when the model is right.", f.Predicted.Runs, f.Predicted.Seed)
	}
	format := func(unit string, v float64) string {
		switch unit {
		case "share", "rho":
			return strconv.FormatFloat(v, 'f', 3, 64)
		case "ms":
			return strconv.FormatFloat(v, 'f', 1, 64)
		}
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	var out []flashView
	for _, n := range flash.Names() {
		v := f.Observed.Value(n.Key)
		fv := flashView{Key: n.Key, Unit: n.Unit, Meaning: n.Meaning, Observed: format(n.Unit, v)}
		if f.Predicted != nil {
			if r, ok := f.Predicted.Figures[n.Key]; ok {
				fv.Predicted = true
				fv.Mean = format(n.Unit, r.Mean)
				fv.Range = format(n.Unit, r.P5) + " – " + format(n.Unit, r.P95)
				fv.Outside = slices.Contains(f.Outside, n.Key)
			}
		}
		out = append(out, fv)
	}
	return out, note
}

// outcomesByCount names the outcomes, the most frequent first, ties in
// name order: as every report lists them.
func outcomesByCount(counts map[string]int) []string {
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if counts[names[i]] != counts[names[j]] {
			return counts[names[i]] > counts[names[j]]
		}
		return names[i] < names[j]
	})
	return names
}

// faultError is what went wrong with a fault, for its row: not applied,
// or not lifted at its time.
func faultError(f runrecord.FaultRecord) string {
	if f.LiftError != "" {
		return "not lifted at its time: " + f.LiftError
	}
	return f.Error
}
