package record

import (
	"strings"
	"testing"
)

// A figure outside its predicted range is a note a reader can act on: it
// names the figures, says what the prediction is, and that the verdict
// does not rest on it (a passing baseline printed the bare range, and a
// newcomer could not tell whether to worry).
func TestOutsideNoteSaysWhatTheModelIs(t *testing.T) {
	n := outsideNote(400, []string{"sold_out_ms", "confirmed"})
	for _, want := range []string{"sold_out_ms, confirmed", "simulation of the reference checkout", "400 runs", "the verdict does not rest on it", "drill after drill"} {
		if !strings.Contains(n, want) {
			t.Errorf("note %q: no %q", n, want)
		}
	}
}
