package load

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gameday-dev/gameday/internal/fileerr"
)

// Limits on a plan, so that a run's memory and goroutines stay bounded
// whatever a scenario asks for.
const (
	// ArrivalLimit bounds the arrivals of one plan. Each arrival keeps a
	// shopper record of about 300 bytes in the report, so a plan at the
	// limit holds under 1 GB of records.
	ArrivalLimit = 3_000_000
	// PoolLimit bounds Plan.MaxShoppers, the shoppers in flight at once.
	PoolLimit = 1_000_000
	// RetryLimit bounds Plan.MaxRetries.
	RetryLimit = 100
	// DefaultIDPrefix is used when Plan.IDPrefix is empty.
	DefaultIDPrefix = "co"
)

// Stage is one step of an arrival-rate plan: the rate ramps linearly from
// the previous stage's Target (0 before the first stage) to Target over
// Duration, like a stage of k6's ramping-arrival-rate executor. A stage whose
// Target equals the previous one holds the rate; a stage from 0 to 0 is a
// pause with no arrival.
type Stage struct {
	// Duration of the stage; must be positive.
	Duration time.Duration
	// Target is the arrival rate, in shoppers per second, at the end of the
	// stage; must be finite and not negative.
	Target float64
	// Hold: the rate is Target for the whole stage, from its start,
	// instead of ramping to it (k6's constant-arrival-rate).
	Hold bool
}

// Plan is a flash sale's load: when shoppers arrive and how they behave.
// Fields whose zero value is not allowed say so; Validate checks them all.
type Plan struct {
	// Stages of the arrival rate; at least one.
	Stages []Stage
	// Patience is how long a shopper keeps trying, counted from its
	// scheduled start (not from when it actually started): its deadline is
	// Scheduled + Patience. Must be positive.
	Patience time.Duration
	// MaxRetries is the number of attempts after the first, made only when
	// an answer refuses and says to come back (unavailable, with a
	// Retry-After). 0 means no retry; at most RetryLimit. A retry_later
	// answer (in progress, pending) is asked after again while patience
	// lasts without spending one.
	MaxRetries int
	// RetryJitter spreads each Retry-After wait uniformly over
	// [1-RetryJitter, 1+RetryJitter] times the asked wait, so that shoppers
	// told to come back at the same time do not all come back at once.
	// 0 means exactly the asked wait; at most 1.
	RetryJitter float64
	// MaxShoppers bounds the shoppers in flight at once (and so the
	// goroutines and connections of a run). An arrival that finds
	// MaxShoppers busy is dropped, never queued. Must be positive; at most
	// PoolLimit.
	MaxShoppers int
	// SessionShare is the fraction of shoppers who carry a session token;
	// the others check out as guests. 0 means nobody has a session; at
	// most 1.
	SessionShare float64
	// Seed seeds every shopper's choices. Same seed, same choices.
	Seed int64
	// IDPrefix starts every checkout id ("<prefix>-<index>"), shopper name
	// and session token, so that runs against the same checkout do not
	// collide. Empty means DefaultIDPrefix.
	IDPrefix string
	// Shops, when set, is a sale across shops: every arrival is for one
	// shop (Shopper.Shop, Call.Shop). The arrivals of Stages go round
	// robin to the shops without stages of their own, in order (arrival k
	// of Stages to the (k mod M)-th), as steady background traffic; a shop
	// with Stages has those arrivals as well (its flash sale), merged with
	// the others in time order. Names are unique and not empty. Empty: one
	// shop, unnamed.
	Shops []ShopLoad
	// Streams are more streams of arrivals on top of Stages (a store's
	// steady traffic under a flash sale): each its own stages, its own mix
	// of journeys, patience and retries, on the plan's clock and seed,
	// merged with the rest in time order. Their purchases (Journey "") are
	// shoppers like any; their other journeys are visits (Report.Visits).
	Streams []Stream
	// Journeys are the journeys the streams' mixes may name, and what
	// each ends in.
	Journeys []Journey
}

// Stream is one stream of arrivals of a plan (Plan.Streams).
type Stream struct {
	// Name names the stream in reports; unique, not empty.
	Name string
	// Stages are the stream's arrival rate, as a plan's; at least one.
	Stages []Stage
	// Mix is which journey each arrival makes, by weight: arrival k's
	// journey is drawn from the plan's seed, the stream and k. At least
	// one share; weights positive.
	Mix []Share
	// Patience and MaxRetries are the stream's shoppers', as a plan's.
	Patience   time.Duration
	MaxRetries int
	// Recorded: the stream's arrivals are a recording's, whose purchases
	// were recorded as purchases: its journeys' funnels bring none.
	Recorded bool
}

// Share is one journey's weight in a stream's mix; Journey "" is the
// purchase.
type Share struct {
	Journey string
	Weight  float64
}

// Journey is what the plan knows of a journey that is not the purchase:
// its name and the share of its visitors who go on to buy (a funnel).
type Journey struct {
	Name string
	// Buy is the share of the journey's visitors who buy, in [0, 1]: each
	// such visitor brings a purchase arrival BuyAfter after its own
	// arrival (the journey's think times), whatever its pages answered: an
	// open model, so that a slow page never thins the checkout's load.
	Buy      float64
	BuyAfter time.Duration
}

// ShopLoad is one shop of a sale across shops.
type ShopLoad struct {
	// Name is the shop's name, as the system under test knows it.
	Name string
	// Stages, when set, are the shop's own arrivals, on top of the plan's
	// (validated as the plan's are). A shop without them has its share
	// of the plan's Stages.
	Stages []Stage
}

// FieldError is one invalid field of a Plan: Field is named as in a
// scenario file's load section ("stages[1].target", "max_shoppers"), Value
// is its value, Msg says what is wrong. It is the one error type of every
// input file and config (internal/fileerr; scenarios.Error and
// matrix.Error are the same type), named here so that a program outside
// this module, which cannot import an internal package, can find it with
// errors.As.
type FieldError = fileerr.Error

// Validate reports every invalid field of p at once, each as a *FieldError
// ("max_shoppers 0: must be between 1 and 1000000") joined with
// errors.Join. A plan that passes can be given to Run.
func (p Plan) Validate() error {
	c := &fields{}
	if len(p.Stages) == 0 {
		c.bad("stages", len(p.Stages), "at least one stage is needed")
	}
	c.stages("stages", p.Stages)
	seen := map[string]bool{}
	background := 0
	for i, sh := range p.Shops {
		c.name(fmt.Sprintf("shops[%d].name", i), sh.Name, "required", seen)
		c.stages(fmt.Sprintf("shops[%d].stages", i), sh.Stages)
		if len(sh.Stages) == 0 {
			background++
		}
	}
	p.validateStreams(c)
	if len(p.Shops) > 0 && background == 0 {
		c.bad("shops", len(p.Shops), "every shop has stages of its own: at least one must take the plan's stages")
	}
	if len(c.errs) == 0 {
		n := arrivals(p.Stages)
		for _, sh := range p.Shops {
			n += arrivals(sh.Stages)
		}
		for _, st := range p.Streams {
			// A funnel's purchases at most double a stream's arrivals;
			// a recorded stream's bring none.
			if st.Recorded {
				n += arrivals(st.Stages)
			} else {
				n += arrivals(st.Stages) * (1 + p.mostBuy(st))
			}
		}
		if n > ArrivalLimit {
			c.bad("stages", fmt.Sprintf("%.0f arrivals", n), fmt.Sprintf("at most %d arrivals in one plan", ArrivalLimit))
		}
	}
	c.patience("patience", p.Patience)
	c.retries("max_retries", p.MaxRetries)
	if !(p.RetryJitter >= 0 && p.RetryJitter <= 1) {
		c.bad("retry_jitter", p.RetryJitter, "must be between 0 and 1")
	}
	if p.MaxShoppers <= 0 || p.MaxShoppers > PoolLimit {
		c.bad("max_shoppers", p.MaxShoppers, fmt.Sprintf("must be between 1 and %d", PoolLimit))
	}
	if !(p.SessionShare >= 0 && p.SessionShare <= 1) {
		c.bad("session_share", p.SessionShare, "must be between 0 and 1")
	}
	// The checkout refuses ids over 200 bytes; leave room for the index.
	if len(p.IDPrefix) > 100 {
		c.bad("id_prefix", len(p.IDPrefix), "at most 100 bytes")
	}
	return errors.Join(c.errs...)
}

// fields gathers a plan's invalid fields, each a *FieldError.
type fields struct{ errs []error }

func (c *fields) bad(field string, value any, problem string) {
	c.errs = append(c.errs, &FieldError{Field: field, Value: fmt.Sprint(value), Msg: problem})
}

// stages checks a list of stages at field.
func (c *fields) stages(field string, sts []Stage) {
	for i, st := range sts {
		if st.Duration <= 0 {
			c.bad(fmt.Sprintf("%s[%d].duration", field, i), st.Duration, "must be positive")
		}
		if math.IsNaN(st.Target) || math.IsInf(st.Target, 0) || st.Target < 0 {
			c.bad(fmt.Sprintf("%s[%d].target", field, i), st.Target, "must be a finite rate, 0 or more, per second")
		}
	}
}

// name checks the name of an item of a list: given (empty says what is
// wrong when it is not) and not seen before; it is seen from then on.
func (c *fields) name(field, name, empty string, seen map[string]bool) {
	switch {
	case name == "":
		c.bad(field, `""`, empty)
	case seen[name]:
		c.bad(field, name, "named twice")
	}
	seen[name] = true
}

func (c *fields) patience(field string, d time.Duration) {
	if d <= 0 {
		c.bad(field, d, "must be positive")
	}
}

func (c *fields) retries(field string, n int) {
	if n < 0 || n > RetryLimit {
		c.bad(field, n, fmt.Sprintf("must be between 0 and %d", RetryLimit))
	}
}

// validateStreams checks the streams and the journeys they name.
func (p Plan) validateStreams(c *fields) {
	journeys := map[string]bool{}
	for i, j := range p.Journeys {
		f := fmt.Sprintf("journeys[%d]", i)
		c.name(f+".name", j.Name, "required (the purchase is no journey of these)", journeys)
		if !(j.Buy >= 0 && j.Buy <= 1) {
			c.bad(f+".buy", j.Buy, "must be between 0 and 1")
		}
		if j.BuyAfter < 0 {
			c.bad(f+".buy_after", j.BuyAfter, "must not be negative")
		}
	}
	names := map[string]bool{}
	for i, st := range p.Streams {
		f := fmt.Sprintf("streams[%d]", i)
		c.name(f+".name", st.Name, "required", names)
		if len(st.Stages) == 0 {
			c.bad(f+".stages", 0, "at least one stage is needed")
		}
		c.stages(f+".stages", st.Stages)
		if len(st.Mix) == 0 {
			c.bad(f+".mix", 0, "at least one journey is needed")
		}
		for k, sh := range st.Mix {
			if sh.Journey != "" && !journeys[sh.Journey] {
				c.bad(fmt.Sprintf("%s.mix[%d].journey", f, k), sh.Journey, "not a journey of the plan")
			}
			if !(sh.Weight > 0) || math.IsInf(sh.Weight, 0) {
				c.bad(fmt.Sprintf("%s.mix[%d].weight", f, k), sh.Weight, "must be a finite weight above 0")
			}
		}
		c.patience(f+".patience", st.Patience)
		c.retries(f+".max_retries", st.MaxRetries)
	}
}

// mostBuy is the largest Buy of st's journeys.
func (p Plan) mostBuy(st Stream) float64 {
	most := 0.0
	for _, sh := range st.Mix {
		if j := p.journey(sh.Journey); j != nil {
			most = max(most, j.Buy)
		}
	}
	return most
}

func (p Plan) journey(name string) *Journey {
	for i := range p.Journeys {
		if p.Journeys[i].Name == name {
			return &p.Journeys[i]
		}
	}
	return nil
}

// patience and retries are those of the shoppers of stream k (0: the
// plan's own stages; k: Streams[k-1]).
func (p Plan) patience(k int) time.Duration {
	if k > 0 && k <= len(p.Streams) {
		return p.Streams[k-1].Patience
	}
	return p.Patience
}

func (p Plan) retries(k int) int {
	if k > 0 && k <= len(p.Streams) {
		return p.Streams[k-1].MaxRetries
	}
	return p.MaxRetries
}

func (p Plan) prefix() string {
	if p.IDPrefix == "" {
		return DefaultIDPrefix
	}
	return p.IDPrefix
}
