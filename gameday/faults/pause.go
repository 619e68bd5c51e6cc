package faults

import "github.com/gameday-dev/gameday/gameday/env"

// PauseJournal is j as the journal of the pauses a described system's
// process handles make (env.JournalPauses): each pause is an entry of run
// runID with this process as its runner, written before the process is
// stopped and removed once it is resumed. A runner killed in between
// leaves the entry, and the next cleanup resumes the process (on the host
// that paused it). A paused process outlives the runner whoever's
// Toxiproxy the drill uses, so this journal is wanted even where the
// injector has none.
func PauseJournal(j *Journal, runID string) env.PauseJournal {
	return pauseJournal{j: j, runID: runID}
}

type pauseJournal struct {
	j     *Journal
	runID string
}

var _ env.PauseJournal = pauseJournal{}

func (p pauseJournal) Pausing(dep string, x env.Paused) error {
	return p.j.Add(Entry{RunID: p.runID, Dependency: dep, Action: "pause", Paused: &x})
}

func (p pauseJournal) Resumed(dep string) error {
	return p.j.Remove(Entry{RunID: p.runID, Dependency: dep})
}
