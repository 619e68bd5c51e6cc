package gameday_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The runner depends on the description of the system under test only:
// no package of it imports the reference checkout, and the packages that
// read run records and drive load carry no Redis or Docker client.
func TestRunnerDependsOnTheContractOnly(t *testing.T) {
	deps := func(pkg string) []string {
		t.Helper()
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	for _, pkg := range []string{"github.com/gameday-dev/gameday/gameday", "github.com/gameday-dev/gameday/gameday/load",
		"github.com/gameday-dev/gameday/gameday/report", "github.com/gameday-dev/gameday/matrix", "github.com/gameday-dev/gameday/gameday/books",
		"github.com/gameday-dev/gameday/gameday/system"} {
		for _, d := range deps(pkg) {
			if strings.HasPrefix(d, "github.com/gameday-dev/gameday/checkout") || d == "github.com/gameday-dev/gameday/breakers" {
				t.Errorf("%s depends on the reference checkout's code: %s", pkg, d)
			}
		}
	}
	// What reads a matrix or a run record, renders a report or drives load
	// links no Redis client, no Docker client and no Toxiproxy: a tool
	// built on them stays small (a matrix check in CI, a load worker).
	heavy := map[string]string{
		"github.com/redis/go-redis/":      "a Redis client",
		"github.com/alicebob/miniredis":   "a Redis server",
		"github.com/docker/":              "a Docker client",
		"github.com/moby/":                "a Docker client",
		"github.com/testcontainers/":      "a Docker client",
		"github.com/Shopify/toxiproxy/v2": "Toxiproxy",
	}
	for _, pkg := range []string{"github.com/gameday-dev/gameday/gameday/load", "github.com/gameday-dev/gameday/gameday/report",
		"github.com/gameday-dev/gameday/matrix", "github.com/gameday-dev/gameday/gameday/runrecord",
		"github.com/gameday-dev/gameday/gameday/flash", "github.com/gameday-dev/gameday/scenarios", "github.com/gameday-dev/gameday/gameday/judge"} {
		for _, d := range deps(pkg) {
			for prefix, what := range heavy {
				if strings.HasPrefix(d, prefix) {
					t.Errorf("%s depends on %s: %s", pkg, what, d)
				}
			}
		}
	}
	// The runner, the environments it may start without Docker and the
	// fault injector link no Docker client: the Docker environments are a
	// value a program passes (package gameday/env/docker), so a local or
	// described drill from a program of its own does not carry moby.
	for _, pkg := range []string{"github.com/gameday-dev/gameday/gameday", "github.com/gameday-dev/gameday/gameday/env",
		"github.com/gameday-dev/gameday/gameday/faults"} {
		for _, d := range deps(pkg) {
			for _, prefix := range []string{"github.com/docker/", "github.com/moby/", "github.com/testcontainers/"} {
				if strings.HasPrefix(d, prefix) {
					t.Errorf("%s depends on %s: %s", pkg, heavy[prefix], d)
				}
			}
		}
	}
}

// A drill's stages are packages that take the value the stage before gave
// and return their own (docs/runner.md, "A drill's stages"): each imports
// only the stages below it, none imports the root package, and only the
// root wires them. A package the stages build on (the judge, the run
// record, the environments, the load) imports neither the root nor a
// stage: an arrow from a lower package back up is a design bug.
func TestStagesDependDownOnly(t *testing.T) {
	const mod = "github.com/gameday-dev/gameday/"
	const root = mod + "gameday"
	stage := func(name string) string { return root + "/internal/" + name }
	// What each stage may import of the runner's own packages.
	allowed := map[string][]string{
		stage("adminapi"): nil,
		stage("ledger"):   nil,
		stage("prepare"):  {stage("ledger"), stage("adminapi")},
		stage("drive"):    {stage("ledger"), stage("adminapi")},
		stage("record"):   {stage("drive"), stage("adminapi")},
		root:              {stage("prepare"), stage("drive"), stage("ledger"), stage("record")},
	}
	runner := func(p string) bool { _, ok := allowed[p]; return ok }
	// Above the root: what calls the runner's API.
	callers := map[string]bool{mod + "gameday/explore": true}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "github.com/gameday-dev/gameday/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		pkg, imports := f[0], f[1:]
		seen[pkg] = true
		for _, imp := range imports {
			if !runner(imp) {
				continue
			}
			switch {
			case runner(pkg):
				if imp != pkg && !slices.Contains(allowed[pkg], imp) {
					t.Errorf("%s imports %s: a stage imports only the stages below it (%s)", pkg, imp, strings.Join(allowed[pkg], ", "))
				}
			case imp == root && (callers[pkg] || !strings.HasPrefix(pkg, root+"/")):
				// The API, called from above.
			default:
				t.Errorf("%s imports %s: a package the runner builds on calls back up into it", pkg, imp)
			}
		}
	}
	for p := range allowed {
		if !seen[p] {
			t.Errorf("%s is not a package any more: the stages of docs/runner.md and this test must say the same", p)
		}
	}
}

// docs/runner.md's stage table and the packages say the same thing: every
// package under gameday/internal is named in the section "A drill's
// stages", and every package it names there exists.
func TestStageTableNamesThePackages(t *testing.T) {
	data, err := os.ReadFile("../docs/runner.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "## A drill's stages")
	if start < 0 {
		t.Fatal(`docs/runner.md has no section "A drill's stages"`)
	}
	section := doc[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`(gameday/internal/[a-z]+)`").FindAllStringSubmatch(section, -1) {
		named[m[1]] = true
	}
	entries, err := os.ReadDir("internal")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() {
			have["gameday/internal/"+e.Name()] = true
		}
	}
	for p := range have {
		if !named[p] {
			t.Errorf("%s is a package of the runner that docs/runner.md's stages do not name", p)
		}
	}
	for p := range named {
		if !have[p] {
			t.Errorf("docs/runner.md names %s as a stage, and there is no such package", p)
		}
	}
}
