package matrix

import (
	"html/template"
	"io"
	"time"
)

// RenderHistoryHTML writes each row's history as one self-contained HTML
// page (no script, no outside resource): the table of the terminal's and
// the Markdown's columns, and every run of the row as a timeline of
// coloured marks, oldest first, each naming its time, verdict and the
// commit that recorded it.
func RenderHistoryHTML(w io.Writer, h History, now time.Time) error {
	type mark struct {
		Letter, Class, Title string
	}
	type row struct {
		historyView
		Runs     int
		Marks    []mark
		Flapping bool
	}
	page := struct {
		Now                   string
		Revisions             int
		FlapRuns, FlapChanges int
		Rows                  []row
		Footer                []string
	}{Now: stamp(now), Revisions: h.Revisions, FlapRuns: FlapRuns, FlapChanges: FlapChanges, Footer: h.footer()}
	for _, rh := range h.Rows {
		r := row{historyView: rh.view(now), Runs: len(rh.Runs), Flapping: rh.Flapping}
		for _, run := range rh.Runs {
			title := stamp(run.At) + ": " + run.Verdict + " (" + commitOrTree(run.Commit)
			if run.Subject != "" {
				title += ": " + run.Subject
			}
			r.Marks = append(r.Marks, mark{Letter: verdictLetter(run.Verdict), Class: "v-" + run.Verdict, Title: title + ")"})
		}
		page.Rows = append(page.Rows, r)
	}
	return historyPage.Execute(w, page)
}

// The view's fields are unexported: the template reads them through
// these.
func (v historyView) ID() string       { return v.id }
func (v historyView) Streak() string   { return v.streak }
func (v historyView) Since() string    { return v.since }
func (v historyView) LastPass() string { return v.lastPass }
func (v historyView) Flaps() string    { return v.flapping }

var historyPage = template.Must(template.New("history").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Resiliency matrix: history</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 10px; text-align: left; vertical-align: top; }
.runs { font-family: ui-monospace, monospace; white-space: nowrap; }
.runs span { display: inline-block; width: 1.3em; text-align: center; margin-right: 1px; border-radius: 2px; color: #fff; }
.v-pass { background: #2e7d32; }
.v-fail { background: #c62828; }
.v-error { background: #6a1b9a; }
.v-inconclusive { background: #9e9e9e; }
.flapping { font-weight: bold; color: #c62828; }
</style>
</head>
<body>
<h1>Resiliency matrix: history</h1>
<p>Every run of each row, oldest first (P pass, F fail, E error, I inconclusive), from {{.Revisions}} commits of the matrix file, as of {{.Now}}. A row flaps when its verdict changed more than {{.FlapChanges}} times in its last {{.FlapRuns}} runs.</p>
<table>
<tr><th>Row</th><th>Runs</th><th>Timeline</th><th>Streak</th><th>Failing since</th><th>Last pass</th><th>Flapping</th></tr>
{{range .Rows}}<tr>
<td>{{.ID}}</td><td>{{.Runs}}</td>
<td class="runs">{{range .Marks}}<span class="{{.Class}}" title="{{.Title}}">{{.Letter}}</span>{{else}}-{{end}}</td>
<td>{{.Streak}}</td><td>{{.Since}}</td><td>{{.LastPass}}</td>
<td{{if .Flapping}} class="flapping"{{end}}>{{.Flaps}}</td>
</tr>
{{end}}</table>
{{range .Footer}}<p>{{.}}</p>
{{end}}</body>
</html>
`))
