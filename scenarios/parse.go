package scenarios

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/gameday-dev/gameday/internal/inputfile"
	"github.com/gameday-dev/gameday/internal/strictyaml"
)

// MaxSize is the largest scenario file Parse and LoadFile accept, in bytes.
const MaxSize = strictyaml.MaxSize

// LoadFile reads, parses and validates the scenario file at path, reading at
// most [MaxSize] bytes. Problems with the content are *Error values (see
// [Parse]); a file that cannot be read gives the wrapped *fs.PathError.
func LoadFile(path string) (*Scenario, error) {
	data, err := inputfile.Read(path, MaxSize)
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	return Parse(path, data)
}

// Parse reads one scenario from data, names file in its errors and in
// Scenario.File, fills in the defaults ([Scenario.SetDefaults]) and
// validates it ([Scenario.Validate]).
//
// It is strict: the input must be at most [MaxSize] bytes of one YAML
// document holding a mapping, without anchors or aliases; unknown and
// repeated keys, values of the wrong type, bare numbers where a duration
// is expected and negative durations are errors. Every error is an *Error
// naming the file, line and field, or several of them joined with
// errors.Join.
func Parse(file string, data []byte) (*Scenario, error) {
	return parse(file, data, fileOpener(file))
}

// ParseForJudging reads a scenario as Parse does, but not its replay's
// recording: what judging a finished run needs of it (its promises,
// faults and invariants; the judge reads no load), from a run directory
// that does not keep the recording. A replay's load has no stages.
func ParseForJudging(file string, data []byte) (*Scenario, error) {
	return parse(file, data, nil)
}

// parse is Parse, reading a replay's recording through open (nil: not at
// all).
func parse(file string, data []byte, open opener) (*Scenario, error) {
	root, err := strictyaml.ParseMapping(file, data, "one scenario", "scenario fields (name: ..., load: ...)")
	if err != nil {
		return nil, err
	}
	d := strictyaml.NewDecoder(file)
	d.Lines[""] = root.Line
	s := &Scenario{}
	d.Decode(root, reflect.ValueOf(s).Elem(), "")
	if err := d.Err(); err != nil {
		return nil, err
	}
	s.File = file
	s.lines = d.Lines
	s.source = bytes.Clone(data)
	s.SetDefaults()
	if r := s.Load.Replay; r != nil {
		v := &validator{s: s}
		if len(s.Load.Stages) > 0 {
			v.add("load.replay", "the load takes its arrivals from stages or from a replay, not both")
		}
		v.replay()
		if len(v.errs) > 0 {
			return nil, joinSorted(v.errs)
		}
		if open != nil {
			if err := s.expandReplay(open); err != nil {
				return nil, err
			}
		}
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	s.parsed = s.bare().Clone()
	return s, nil
}
