package drive

import (
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/scenarios"
)

func TestParseBreakerMetric(t *testing.T) {
	const expo = `# HELP gameday_breaker_state Circuit breaker state.
# TYPE gameday_breaker_state gauge
gameday_breaker_state{dependency="inventory"} 0
gameday_breaker_state{dependency="payment"} 2
gameday_breaker_state{dependency="sessions"} 1
# TYPE cb_state gauge
cb_state{dep="payment"} 5
`
	got, err := parseBreakerMetric(strings.NewReader(expo), &scenarios.BreakerMetric{})
	if err != nil || got["payment"] != "open" || got["inventory"] != "closed" || got["sessions"] != "half-open" {
		t.Errorf("default gauge: %v, %v", got, err)
	}
	five := 5.0
	got, err = parseBreakerMetric(strings.NewReader(expo), &scenarios.BreakerMetric{Name: "cb_state", Label: "dep", Open: &five})
	if err != nil || got["payment"] != "open" || len(got) != 1 {
		t.Errorf("custom gauge: %v, %v", got, err)
	}
	if _, err := parseBreakerMetric(strings.NewReader(expo), &scenarios.BreakerMetric{Name: "missing"}); err == nil {
		t.Error("a missing gauge was not an error")
	}
}
