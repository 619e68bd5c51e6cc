package payment

import (
	"flag"

	flags "github.com/gameday-dev/gameday/internal/checkoutflags"
)

// RegisterFlags defines the stand-in's flags on fs, each writing to its
// field of c, and sets those fields to the flags' defaults, which are
// the command's (checkoutdefaults.StandInMinLatency and so on), not the
// zero Config's.
// The flags, their defaults and their help are listed once, in package
// internal/checkoutflags, where the runner renders a scenario's payment
// section with them too. Now and Sync have no flag.
func (c *Config) RegisterFlags(fs *flag.FlagSet) { flags.Register(fs, c.flagVars()) }

// Args renders c as the flags RegisterFlags defines: one "-name", "value"
// pair for every flagged setting, defaults included, in a fixed order. A
// zero is a value of its own here (no latency, no declines) and is
// rendered too, unless the flag's default is zero. Parsing them after
// RegisterFlags gives c's flagged settings back.
func (c Config) Args() []string { return flags.Args(c.flagVars()) }

// flagVars binds the stand-in's flags to c's fields.
func (c *Config) flagVars() []flags.Var {
	return []flags.Var{
		flags.StandInMinLatency.Bind(&c.MinLatency),
		flags.StandInMaxLatency.Bind(&c.MaxLatency),
		flags.StandInTailProbability.Bind(&c.TailProbability),
		flags.StandInTailLatency.Bind(&c.TailLatency),
		flags.StandInDeclineRate.Bind(&c.DeclineRate),
		flags.StandInSlots.Bind(&c.Slots),
		flags.StandInSeed.Bind(&c.Seed),
		flags.StandInData.Bind(&c.DataDir),
	}
}
