package record

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gameday-dev/gameday/gameday/load"
)

// AttemptsFile is the name of the file in a run's directory that lists
// every request the shoppers sent, one row each: the evidence behind every
// figure of run.json, for the SRE who wants to know which shopper saw what.
const AttemptsFile = "attempts.csv"

// attemptsHeader names the columns of AttemptsFile. Times are milliseconds
// from the start of the load (the zero of the fault timeline); took_ms is
// the request's own time, not counting the generator's lateness.
// attempt numbers the shopper's requests from 1 across the purchase's
// steps; step is the request's step, from 1 (a template's .Attempt counts
// within a step), and step_name its name in the system file.
var attemptsHeader = []string{"shopper", "checkout_id", "attempt", "sent_ms", "took_ms", "code", "status", "reason", "retry_after_ms", "degraded", "outcome", "error", "step", "step_name"}

// writeAttempts writes every attempt of r to dir/AttemptsFile, through a
// temporary file renamed into place, so a reader never sees half of it.
// steps names the purchase's steps, in order.
func writeAttempts(dir string, r *load.Report, steps []string) (err error) {
	path := filepath.Join(dir, AttemptsFile)
	f, err := os.CreateTemp(dir, ".attempts-*.csv")
	if err != nil {
		return fmt.Errorf("write %s: %w", AttemptsFile, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 64<<10)
	w := csv.NewWriter(bw)
	if err := w.Write(attemptsHeader); err != nil {
		return err
	}
	ms := func(d int64) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) }
	row := make([]string, len(attemptsHeader))
	for _, s := range r.Shoppers {
		for i, a := range s.Attempts {
			row[0] = strconv.Itoa(s.Index)
			row[1] = s.ID
			row[2] = strconv.Itoa(i + 1)
			row[3] = ms(int64(a.At))
			row[4] = ms(int64(a.Took))
			row[5] = strconv.Itoa(a.Code)
			row[6] = a.Status
			row[7] = a.Reason
			row[8] = strconv.FormatInt(a.RetryAfter.Milliseconds(), 10)
			row[9] = strconv.FormatBool(a.Degraded)
			row[10] = s.Outcome
			row[11] = a.Err
			row[12] = strconv.Itoa(a.Step + 1)
			row[13] = ""
			if a.Step >= 0 && a.Step < len(steps) {
				row[13] = steps[a.Step]
			}
			if err := w.Write(row); err != nil {
				return err
			}
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
