package explore

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/gameday-dev/gameday/internal/pathutil"
	"github.com/gameday-dev/gameday/scenarios"
)

// Scenario writes schedule s on base as a scenario file to be kept at
// path, and returns it parsed (so validated) from that path: base's
// system (its path relative to path's directory), seed, stock,
// invariants' allowances and load (its rates times Rate, its stages'
// lengths times Length), the schedule's faults, and no promise beyond the
// books' invariants, which is what explore judges. description says
// where it came from.
func (s Schedule) Scenario(base *scenarios.Scenario, path, name, description string) ([]byte, *scenarios.Scenario, error) {
	sys, err := systemFrom(path, base.SystemPath())
	if err != nil {
		return nil, nil, err
	}
	out := outScenario{
		Name: name, Description: description, System: sys,
		Seed: base.Seed, Stock: base.Stock,
		Matrix: outMatrix{Dependency: "none", Failure: "none"},
		// The base's load, every field of it, its stages scaled below.
		Load: base.Load,
	}
	// A replay's recording is written as the held stages it gave.
	out.Load.Stages, out.Load.Replay = nil, nil
	var total time.Duration
	for _, st := range base.Load.Stages {
		d := time.Duration(float64(st.Duration.D()) * s.Length).Round(time.Millisecond)
		d = max(d, time.Millisecond)
		total += d
		out.Load.Stages = append(out.Load.Stages, scenarios.Stage{Duration: scenarios.Duration(d), Target: round3(st.Target * s.Rate), Hold: st.Hold})
	}
	// The streams likewise, each trimmed to the load's length (rounding
	// may take one a millisecond past it); one left without arrivals goes.
	out.Load.Streams = nil
	for _, st := range base.Load.Streams {
		c := st
		c.Stages = nil
		var sd time.Duration
		arrivals := false
		for _, g := range st.Stages {
			d := max(time.Duration(float64(g.Duration.D())*s.Length).Round(time.Millisecond), time.Millisecond)
			d = min(d, total-sd)
			if d <= 0 {
				break
			}
			sd += d
			t := round3(g.Target * s.Rate)
			arrivals = arrivals || t > 0
			c.Stages = append(c.Stages, scenarios.Stage{Duration: scenarios.Duration(d), Target: t, Hold: g.Hold})
		}
		if arrivals {
			out.Load.Streams = append(out.Load.Streams, c)
		}
	}
	var kinds []string
	for i, f := range s.Faults {
		if f.At >= total {
			continue // shortened away
		}
		fam, ok := FamilyByName(f.Family)
		if !ok {
			return nil, nil, fmt.Errorf("fault %d: no family %q", i, f.Family)
		}
		length := min(f.For, total-f.At)
		of := outFault{Name: s.faultName(i), Target: f.Target, At: dur(f.At), For: dur(length)}
		switch {
		case f.Family == "down":
			of.Down = true
		case fam.Process:
			of.Process = f.Family
		case fam.Cache != nil:
			c := fam.Cache(f.Intensity)
			of.Cache = &outCache{Flush: c.Flush, Expire: c.Expire, MaxMemory: c.MaxMemory, Policy: c.Policy}
			if c.Every > 0 && c.Every.D() <= length {
				// A fault shorter than its interval clears once.
				of.Cache.Every = dur(c.Every.D())
			}
		default:
			of.Toxic = &outToxic{Type: f.Family, Attributes: f.attributes(fam)}
		}
		out.Faults = append(out.Faults, of)
		if out.Matrix.Dependency == "none" {
			out.Matrix.Dependency = f.Target
		}
		if !slices.Contains(kinds, f.Family) {
			kinds = append(kinds, f.Family)
		}
	}
	if len(kinds) > 0 {
		out.Matrix.Failure = strings.Join(kinds, "-")
	}
	if len(base.Invariants.Allow) > 0 {
		out.Invariants = &outInvariants{Allow: base.Invariants.Allow}
	}
	data, err := yaml.Marshal(out)
	if err != nil {
		return nil, nil, fmt.Errorf("write the scenario: %w", err)
	}
	sc, err := scenarios.Parse(path, data)
	if err != nil {
		return nil, nil, fmt.Errorf("the scenario explore wrote does not parse (a bug of explore's): %w", err)
	}
	return data, sc, nil
}

// attributes are fault f's toxic's attributes: its family's at its
// intensity and, for an aimed fault, its kind; an aimed fault at the
// lowest intensities acts on the first request of its kind alone (first:
// 1), as a hand-written drill of one lost COMMIT does.
func (f Fault) attributes(fam Family) map[string]any {
	a := fam.attrs(f.Intensity)
	if f.Kind != "" {
		a["kind"] = f.Kind
		if _, ok := a["probability"]; ok && f.Intensity <= 0.25 {
			delete(a, "probability")
			a["first"] = 1
		}
	}
	return a
}

// systemFrom is how a scenario kept at path names the system file
// system: where both are in one git repository, the system's path from
// the repository's top ("gameday.yaml", "systems/shop.yaml"), which a
// scenario finds from any folder of the repository it is moved to
// (scenarios.Scenario.SystemPath looks in the folders above it); else, or
// when another file of that name in a folder between would be found
// first, its path from path's folder.
func systemFrom(path, system string) (string, error) {
	dir, abs := filepath.Dir(pathutil.Abs(path)), pathutil.Abs(system)
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		return "", fmt.Errorf("the system file %s from %s: %w", system, path, err)
	}
	top := repoTop(filepath.Dir(abs))
	if top == "" || (dir != top && !strings.HasPrefix(dir, top+string(filepath.Separator))) {
		return filepath.ToSlash(rel), nil
	}
	fromTop, err := filepath.Rel(top, abs)
	if err != nil {
		return filepath.ToSlash(rel), nil
	}
	probe := &scenarios.Scenario{File: path, System: fromTop}
	if pathutil.Abs(probe.SystemPath()) != abs {
		return filepath.ToSlash(rel), nil
	}
	return filepath.ToSlash(fromTop), nil
}

// repoTop is the folder of the git repository dir is in (the nearest
// holding .git), or "".
func repoTop(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// faultName is the name fault i of s has in a scenario: its place in the
// schedule drawn, its dependency and its family. It stays the trial's
// through shrinking, and with it the default seed of a request-aware
// toxic (drawn from the run's seed and the fault's name), so a shrunk
// lost reply picks the requests the trial's did.
func (s Schedule) faultName(i int) string {
	f := s.Faults[i]
	return fmt.Sprintf("f%d-%s-%s", s.number(i), f.Target, strings.ReplaceAll(f.Family, "_", "-"))
}

// dur writes d as a scenario does ("1.5s", "250ms").
func dur(d time.Duration) string { return d.String() }

func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

type outScenario struct {
	Name        string         `yaml:"name"`
	Description string         `yaml:"description"`
	System      string         `yaml:"system"`
	Matrix      outMatrix      `yaml:"matrix"`
	Seed        int64          `yaml:"seed"`
	Stock       int64          `yaml:"stock"`
	Load        scenarios.Load `yaml:"load"`
	Faults      []outFault     `yaml:"faults,omitempty"`
	Invariants  *outInvariants `yaml:"invariants,omitempty"`
}

type outMatrix struct {
	Dependency string `yaml:"dependency"`
	Failure    string `yaml:"failure"`
}

type outFault struct {
	Name    string    `yaml:"name"`
	Target  string    `yaml:"target"`
	At      string    `yaml:"at"`
	For     string    `yaml:"for"`
	Down    bool      `yaml:"down,omitempty"`
	Process string    `yaml:"process,omitempty"`
	Toxic   *outToxic `yaml:"toxic,omitempty"`
	Cache   *outCache `yaml:"cache,omitempty"`
}

type outCache struct {
	Flush     string `yaml:"flush,omitempty"`
	Expire    string `yaml:"expire,omitempty"`
	Every     string `yaml:"every,omitempty"`
	MaxMemory string `yaml:"maxmemory,omitempty"`
	Policy    string `yaml:"policy,omitempty"`
}

type outToxic struct {
	Type       string         `yaml:"type"`
	Attributes map[string]any `yaml:"attributes,omitempty"`
}

type outInvariants struct {
	Allow map[string]int64 `yaml:"allow"`
}
