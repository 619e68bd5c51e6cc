package payment

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/gameday-dev/gameday/internal/fileerr"
)

// Config sets how the payment-gateway stand-in behaves. The zero value is a
// provider that answers at once, approves every charge, has no slot limit and
// keeps its books in memory.
type Config struct {
	// MinLatency and MaxLatency bound a charge's processing time, drawn
	// uniformly in [MinLatency, MaxLatency]. Both zero means no latency.
	// MaxLatency below MinLatency is an error, so a fixed latency is
	// MinLatency == MaxLatency.
	MinLatency, MaxLatency time.Duration
	// TailProbability is the probability, in [0, 1], that a charge gets an
	// extra long-tail delay on top of its uniform latency. Zero means no tail.
	TailProbability float64
	// TailLatency is the mean of the extra delay, which is drawn from an
	// exponential distribution. It must be above zero when TailProbability is.
	TailLatency time.Duration
	// DeclineRate is the fraction of charges declined, in [0, 1].
	DeclineRate float64
	// Slots is how many charges are processed at once; the others wait in
	// arrival order, roughly, for a slot. Zero means no limit.
	Slots int
	// Seed seeds every random draw, together with the charge's key.
	Seed int64
	// Now tells the time for created_at and voided_at. Nil means time.Now.
	// Processing sleeps on the real clock whatever Now is.
	Now func() time.Time
	// DataDir is where the books are kept so that they survive the
	// stand-in being killed, as a real provider's do: every change (a
	// charge decided, a void) is appended to a journal file in it before
	// it is answered, and NewServer replays that file. It is created if it
	// does not exist. "" keeps the books in memory only, lost with the
	// process. One server at a time may use a DataDir.
	DataDir string
	// Sync flushes every journal write to the disk (fsync) before the
	// answer is sent, so that the books also survive a crash of the
	// machine, at the cost of one disk flush per change with the books
	// locked. Without it nothing answered is lost when the process is
	// killed: its writes are in the kernel's page cache, which outlives
	// the process. It needs DataDir.
	Sync bool
}

// ConfigError reports one invalid Config field: Field is the Go name of
// the field, such as "MaxLatency", Value its value as written by fmt, Msg
// what is wrong with it. It is the one error type of every input file and
// config gameday checks (internal/fileerr), named here so that a program
// outside this module, which cannot import an internal package, can find
// it with errors.As.
type ConfigError = fileerr.Error

// Validate checks every field and reports every problem it finds, each as a
// *ConfigError ("MaxLatency 10ms: must not be less than MinLatency 20ms"),
// joined with errors.Join. It returns nil for a valid Config.
func (c Config) Validate() error {
	var errs []error
	bad := func(field string, value any, reason string) {
		errs = append(errs, &ConfigError{Field: field, Value: fmt.Sprint(value), Msg: reason})
	}
	if c.MinLatency < 0 {
		bad("MinLatency", c.MinLatency, "must not be negative")
	}
	if c.MaxLatency < 0 {
		bad("MaxLatency", c.MaxLatency, "must not be negative")
	}
	if c.MaxLatency < c.MinLatency {
		bad("MaxLatency", c.MaxLatency, "must not be less than MinLatency "+c.MinLatency.String())
	}
	if !(c.TailProbability >= 0 && c.TailProbability <= 1) { // also catches NaN
		bad("TailProbability", c.TailProbability, "must be in [0, 1]")
	}
	if c.TailLatency < 0 {
		bad("TailLatency", c.TailLatency, "must not be negative")
	}
	if c.TailProbability > 0 && c.TailLatency == 0 {
		bad("TailLatency", c.TailLatency, "must be above zero when TailProbability is "+
			strconv.FormatFloat(c.TailProbability, 'g', -1, 64))
	}
	if !(c.DeclineRate >= 0 && c.DeclineRate <= 1) {
		bad("DeclineRate", c.DeclineRate, "must be in [0, 1]")
	}
	if c.Slots < 0 {
		bad("Slots", c.Slots, "must not be negative (0 means no limit)")
	}
	if c.DataDir != "" {
		// A missing directory is fine, NewServer creates it; anything else
		// in the way is reported now, before a drill relies on it.
		fi, err := os.Stat(c.DataDir)
		switch {
		case err == nil && !fi.IsDir():
			bad("DataDir", c.DataDir, "is not a directory")
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			bad("DataDir", c.DataDir, "cannot be used: "+err.Error())
		}
	}
	if c.Sync && c.DataDir == "" {
		bad("Sync", c.Sync, "needs DataDir: books kept in memory have nothing to flush")
	}
	return errors.Join(errs...)
}

// outcome is what the provider decides for one charge.
type outcome struct {
	latency  time.Duration // how long processing takes
	declined bool          // whether the charge is declined
}

// draw decides the outcome of the charge with the given key. It depends only
// on the Config and the key, so the same seed and key give the same outcome
// whatever order charges arrive in.
func (c Config) draw(key string) outcome {
	h := fnv.New64a()
	h.Write([]byte(key)) // never fails
	r := rand.New(rand.NewPCG(uint64(c.Seed), h.Sum64()))

	// Always draw the same values in the same order, so that one setting
	// does not shift the draws of another. ExpFloat64 comes last because it
	// consumes a variable number of values.
	declineCoin := r.Float64()
	spread := r.Float64()
	tailCoin := r.Float64()
	tail := r.ExpFloat64()

	latency := float64(c.MinLatency)
	if c.MaxLatency > c.MinLatency {
		latency += spread * float64(c.MaxLatency-c.MinLatency)
	}
	if c.TailLatency > 0 && tailCoin < c.TailProbability {
		latency += tail * float64(c.TailLatency)
	}
	return outcome{
		latency:  time.Duration(min(latency, float64(math.MaxInt64/2))),
		declined: declineCoin < c.DeclineRate,
	}
}
