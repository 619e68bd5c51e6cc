package checkoutdefaults

import (
	"strings"
	"testing"
	"time"
)

// The words the flags' help and the docs use say what ProbeTimeout does:
// half the timeout for payment, a quarter for the Redis dependencies.
func TestProbeTimeoutWordsSayProbeTimeout(t *testing.T) {
	for _, tc := range []struct {
		dep   string
		words string
		frac  time.Duration // the timeout divided by this
	}{
		{"payment", "half", 2},
		{"inventory", "a quarter", 4},
		{"sessions", "a quarter", 4},
	} {
		timeout := 8 * time.Second
		if got := ProbeTimeout(tc.dep, timeout); got != timeout/tc.frac {
			t.Errorf("ProbeTimeout(%s, %v) = %v, want %v", tc.dep, timeout, got, timeout/tc.frac)
		}
		if w := ProbeTimeoutWords(tc.dep); !strings.HasPrefix(w, tc.words+" ") {
			t.Errorf("ProbeTimeoutWords(%s) = %q, want %s of the timeout", tc.dep, w, tc.words)
		}
	}
}
