package strictyaml

import (
	"encoding"
	"fmt"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration written as a string ("250ms", "2s") in YAML
// and JSON, never a bare number, and never negative.
type Duration time.Duration

var (
	_ yaml.Unmarshaler         = (*Duration)(nil)
	_ yaml.Marshaler           = Duration(0)
	_ encoding.TextMarshaler   = Duration(0)
	_ encoding.TextUnmarshaler = (*Duration)(nil)
)

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String returns the duration as time.Duration formats it ("1.5s").
func (d Duration) String() string { return time.Duration(d).String() }

// ParseDuration reads a duration string: time.ParseDuration's syntax, not
// negative.
func ParseDuration(s string) (Duration, error) {
	v, err := time.ParseDuration(s)
	if err != nil {
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			return 0, fmt.Errorf("%s is not a duration (write %s)", Quote(s), withUnit(s))
		}
		return 0, fmt.Errorf("%s is not a duration (write a number and a unit: \"250ms\", \"2s\", \"1m\")", Quote(s))
	}
	if v < 0 {
		return 0, fmt.Errorf("%s is negative", Quote(s))
	}
	return Duration(v), nil
}

// withUnit is the hint for a number written without a unit: seconds, and
// milliseconds too where the number is large enough to mean them ("300"
// is more likely 300ms than five minutes).
func withUnit(num string) string {
	if f, err := strconv.ParseFloat(num, 64); err == nil && f >= 100 {
		return Quote(num+"ms") + " or " + Quote(num+"s")
	}
	return Quote(num + "s")
}

// UnmarshalYAML accepts only a YAML string that time.ParseDuration reads
// and that is not negative. A bare number is refused with a hint to write
// a unit.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("want a duration string such as \"2s\", got a %s", KindName(n))
	}
	switch n.ShortTag() {
	case "!!str":
		v, err := ParseDuration(n.Value)
		if err != nil {
			return err
		}
		*d = v
		return nil
	case "!!int", "!!float":
		return fmt.Errorf("%s is a bare number, not a duration (write %s)", Clip(n.Value), withUnit(n.Value))
	case "!!null":
		*d = 0
		return nil
	}
	return fmt.Errorf("%s is not a duration (write a string such as \"2s\")", Quote(n.Value))
}

// MarshalYAML writes the duration as a string ("2s").
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// MarshalText writes the duration as a string ("2s"), so that JSON run
// records show durations as the input file does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads what MarshalText writes, with the rules of
// UnmarshalYAML.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("unmarshal duration: %w", err)
	}
	*d = v
	return nil
}
