package faults

import "github.com/gameday-dev/gameday/gameday/toxi"

func toxiFor(name string) toxi.Toxic {
	return toxi.Toxic{Name: name, Type: "latency", Attributes: map[string]any{"latency": 1}}
}
