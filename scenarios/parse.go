package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"reflect"
	"slices"
	"time"

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

// ParseForJudging reads a scenario as Parse does, for judging a finished
// run again: its promises, faults and invariants (the judge reads no
// load). A run directory does not keep a replay's recording: where the
// recording cannot be found, the replay stands as one held stage of the
// run's purchases over lasted, and each other journey it replayed as a
// stream of one held stage of that journey's visits (arrivals, by
// journey: purchase and the journeys' names), the run's own load as the
// scenario planned it (before -rate-scale and -time-scale), so that what
// depends on the load's length, and the journeys its promises name, are
// checked as they were.
func ParseForJudging(file string, data []byte, lasted time.Duration, arrivals map[string]float64) (*Scenario, error) {
	files := fileOpener(file)
	lasted = max(lasted, time.Millisecond)
	held := func(n float64) []Stage {
		return []Stage{{Duration: Duration(lasted), Target: n / lasted.Seconds(), Hold: true}}
	}
	in := standIn{stages: held(arrivals[PurchaseJourney])}
	for _, j := range slices.Sorted(maps.Keys(arrivals)) {
		if j != PurchaseJourney && arrivals[j] > 0 {
			in.streams = append(in.streams, Stream{Name: ReplayStream(j), Mix: map[string]float64{j: 100}, Stages: held(arrivals[j])})
		}
	}
	if len(in.streams) == 0 {
		in.stages = held(max(arrivals[PurchaseJourney], 1))
	}
	return parse(file, data, func(name string) (io.ReadCloser, string, error) {
		f, p, err := files(name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, p, errStandIn
		}
		return f, p, err
	}, &in)
}

// standIn is what a replay's recording that is not there stands as.
type standIn struct {
	stages  []Stage
	streams []Stream
}

// errStandIn says that a replay's recording is not there to be read, and
// the stand-in stage is to be used.
var errStandIn = errors.New("the recording is not there")

// parse is Parse, reading a replay's recording through open; where open
// answers errStandIn, the load is the stand-in stage instead.
func parse(file string, data []byte, open opener, in ...*standIn) (*Scenario, error) {
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
	if r := s.Load.Replay; r != nil && r.Speedup == 0 && s.lines["load.replay.speedup"] > 0 {
		return nil, &Error{File: file, Line: s.lines["load.replay.speedup"], Field: "load.replay.speedup", Msg: "0: want a number above 0 (1, or left out: as recorded)"}
	}
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
		err := s.expandReplay(open)
		if errors.Is(err, errStandIn) && len(in) > 0 {
			s.Load.Stages, err = in[0].stages, nil
			for _, st := range in[0].streams {
				if slices.ContainsFunc(s.Load.Streams, func(o Stream) bool { return o.Name == st.Name }) {
					continue // a stream of the scenario's own, not the replay's
				}
				retries := s.Load.MaxRetries
				st.Patience, st.MaxRetries, st.Recorded = s.Load.Patience, &retries, true
				s.Load.Streams = append(s.Load.Streams, st)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	s.parsed = s.bare().Clone()
	return s, nil
}
