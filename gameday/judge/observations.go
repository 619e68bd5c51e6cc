package judge

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// ObservationsFile is where a run directory keeps what the run observed,
// gzipped JSON: the judge's whole input besides the scenario.
const ObservationsFile = "observations.json.gz"

// ObservationsVersion is the version of the observations this gameday
// writes. A reader refuses any other, naming it: a run directory written
// by a later gameday is judged by that gameday.
const ObservationsVersion = 1

// maxObservations bounds what ReadObservations inflates: a run of 3,000
// arrivals a second for ten minutes is about 400 MB of JSON.
const maxObservations = 2 << 30

// Observations are everything a drill saw that its verdict is decided
// from: the shoppers, the faults' real spans, the breakers' transitions,
// the metrics' samples, the moves, the books as they were read, how the
// load ended and how the machines that measured it kept up. Judging them
// ([Run]) reads nothing else but the scenario, so a finished run can be
// judged again, with its own promises or changed ones.
type Observations struct {
	Version int `json:"version"`
	// System is the name of the system under test; SystemFile its
	// description, as the notes name it.
	System     string `json:"system"`
	SystemFile string `json:"system_file"`
	// End is the length of the load.
	End      time.Duration `json:"end_ns"`
	Faults   FaultTimes    `json:"faults"`
	Shoppers []Shopper     `json:"shoppers"`
	// Visits are the arrivals of the journeys that do not buy (a load's
	// streams), for the promises narrowed to them; they never touch the
	// books.
	Visits   []Shopper               `json:"visits,omitempty"`
	Breakers map[string][]Transition `json:"breakers"`
	// Metrics are the samples by query; nil when nothing was sampled.
	Metrics map[string][]Sample `json:"metrics"`
	Moves   []Move              `json:"moves,omitempty"`
	// Books are the books read after the load, one per ledger (one, or in
	// a sale across shops one per shop and pod); empty when the system
	// describes none.
	Books []Books `json:"books,omitempty"`
	// Unsettled: the books were read before they settled.
	Unsettled bool  `json:"unsettled,omitempty"`
	Ending    Ended `json:"ending"`
	// Starvation is the stalls of the machines that measured the run and,
	// where it shares the runner's host, the system's own; Host says them
	// in words, for the verdict's reason.
	Starvation Starvation `json:"starvation"`
	Host       string     `json:"host"`
}

// everyone is the purchases and the visits, as the promises read them
// (Evaluate tells them apart by Shopper.Journey).
func (o *Observations) everyone() []Shopper {
	if len(o.Visits) == 0 {
		return o.Shoppers
	}
	return slices.Concat(o.Shoppers, o.Visits)
}

// Books are one ledger's books as read after the load.
type Books struct {
	// Shop and Pod are whose books these are ("" without shops, pods);
	// Away: the shop did not start on this pod, a move took it there.
	Shop string `json:"shop,omitempty"`
	Pod  string `json:"pod,omitempty"`
	Away bool   `json:"away,omitempty"`
	// Name says whose books these are, File the system file that
	// describes them, both for the notes.
	Name string `json:"name"`
	File string `json:"file"`
	// Facts are nil when the books could not be read.
	Facts *Facts `json:"facts"`
}

// Ended is how the load ended, as observed: [Ending] without what judging
// adds, its errors as their messages.
type Ended struct {
	Fault       string   `json:"fault,omitempty"`
	Left        string   `json:"left,omitempty"`
	Unread      string   `json:"unread,omitempty"`
	ShardLost   string   `json:"shard_lost,omitempty"`
	Aborted     bool     `json:"aborted,omitempty"`
	Interrupted bool     `json:"interrupted,omitempty"`
	Halt        string   `json:"halt,omitempty"`
	Guard       string   `json:"guard,omitempty"`
	Idle        []string `json:"idle,omitempty"`
}

// ErrText is err's message, "" for nil: how Ended keeps an error.
func ErrText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func textErr(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

// WriteObservations writes o into path, gzipped, all or nothing.
func WriteObservations(path string, o *Observations) error {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if err := json.NewEncoder(zw).Encode(o); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return runrecord.WriteFileAtomic(path, b.Bytes())
}

// ReadObservations reads what WriteObservations wrote. An unknown version
// is refused with its number.
func ReadObservations(path string) (*Observations, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read observations: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	data, err := io.ReadAll(io.LimitReader(zr, maxObservations+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxObservations {
		return nil, fmt.Errorf("read %s: larger than %d bytes once inflated", path, maxObservations)
	}
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if v.Version != ObservationsVersion {
		return nil, fmt.Errorf("read %s: version %d, but this gameday reads version %d: judge it with the gameday that ran it", path, v.Version, ObservationsVersion)
	}
	o := &Observations{}
	if err := json.Unmarshal(data, o); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return o, nil
}
