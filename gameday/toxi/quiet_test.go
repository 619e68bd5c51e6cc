package toxi_test

import (
	"testing"

	zlog "github.com/rs/zerolog/log"

	_ "github.com/gameday-dev/gameday/gameday/toxi"
)

// Toxiproxy's toxics and links log through zerolog's global logger, at
// trace level unless told otherwise: with gameday's Toxiproxy linked in,
// none of it reaches a drill's or a search's output ("BandwidthToxic was
// interrupted" on every removal, it printed).
func TestToxiproxysOwnLinesAreQuiet(t *testing.T) {
	for name, e := range map[string]interface{ Enabled() bool }{
		"trace": zlog.Trace(), "debug": zlog.Debug(), "info": zlog.Info(), "warn": zlog.Warn(), "error": zlog.Error(),
	} {
		if e.Enabled() {
			t.Errorf("zerolog's global logger writes %s lines", name)
		}
	}
}
