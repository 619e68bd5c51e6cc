package prepare

import (
	"strings"
	"testing"
)

// A time-scaled drill of a described system says that the system's own
// times were not scaled; at full scale it says nothing.
func TestScaledSystemNote(t *testing.T) {
	if n := ScaledSystemNote("shop", 1); n != "" {
		t.Errorf("full scale: %q, want no note", n)
	}
	if n := ScaledSystemNote("shop", 0.5); !strings.Contains(n, "time-scaled by 0.5") || !strings.Contains(n, "shop's own leases") {
		t.Errorf("half scale: %q", n)
	}
}
