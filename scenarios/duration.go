package scenarios

import "github.com/gameday-dev/gameday/internal/strictyaml"

// Duration is a time.Duration written as a string ("250ms", "2s"), never
// a bare number, and never negative; read and written as a string in YAML
// and in JSON.
type Duration = strictyaml.Duration

// parseDuration reads a duration string: time.ParseDuration's syntax, not
// negative.
func parseDuration(s string) (Duration, error) { return strictyaml.ParseDuration(s) }
