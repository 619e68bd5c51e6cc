package faults

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/owner"
	"github.com/gameday-dev/gameday/internal/redact"
)

// Leftover is a fault Preflight found on a proxy a drill is about to use:
// a toxic, or the proxy disabled.
type Leftover struct {
	Toxiproxy string // the API's address
	Proxy     string
	Toxic     *toxi.Toxic // nil: the proxy is disabled
	// Entry is the journal's record of it; nil if no run journaled it.
	Entry *Entry
	// Why says why the drill does not remove it itself, and how to.
	Why string
}

func (l Leftover) String() string {
	what := "is disabled"
	if l.Toxic != nil {
		what = fmt.Sprintf("has toxic %q (%s, %s)", l.Toxic.Name, l.Toxic.Type, l.Toxic.Stream)
	}
	return fmt.Sprintf("toxiproxy %s: proxy %s %s: %s", redact.URL(l.Toxiproxy), l.Proxy, what, l.Why)
}

// LeftoverError is Preflight's refusal: faults already on the proxies the
// drill uses, each with how to remove it. Nothing was changed.
type LeftoverError struct {
	Found []Leftover
}

func (e *LeftoverError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the proxies this drill uses carry faults it did not add, and a drill on top of them would measure them too (nothing was changed; %d found):", len(e.Found))
	for _, l := range e.Found {
		b.WriteString("\n  ")
		b.WriteString(l.String())
	}
	return b.String()
}

// Preflight makes sure a drill starts on clean proxies: it lists each of
// proxies (on e's Toxiproxy, one API call within callTimeout) with its
// toxics and whether it is enabled. A toxic or a disabled proxy that j
// records for a runner that is gone is removed, by the journal's rules
// (Cleanup's), and returned. Anything else — a toxic or a disabled proxy
// no run journaled in j, one of a runner that still runs (another drill
// on the same proxy), one whose removal fails — refuses the drill with a
// *LeftoverError naming the Toxiproxy, the proxy and the toxic and saying
// how to remove it; a refusal found before anything is removed changes
// nothing. A proxy that does not exist carries no fault and is passed
// over. j may be nil (nothing is journaled: every fault found refuses).
//
// The runner calls it in a drill's setup, after the environment is up and
// before anything is sent; its error is a setup error (exit 2).
func Preflight(ctx context.Context, e env.Environment, j *Journal, proxies []string) (cleaned []Entry, err error) {
	c := e.Toxiproxy()
	lctx, cancel := context.WithTimeout(ctx, callTimeout)
	ps, err := c.Proxies(lctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("toxiproxy at %s: list its proxies before the drill: %w", redact.URL(c.Addr()), err)
	}
	var es []Entry
	journal := "" // no journal
	if j != nil {
		journal = j.path
		if es, err = j.Entries(); err != nil {
			return nil, err
		}
	}
	find := func(proxy, toxic string, disabled bool) *Entry {
		for i := range es {
			x := &es[i]
			if x.Container == "" && x.Paused == nil && sameAPI(x.Toxiproxy, c.Addr()) && x.Proxy == proxy && x.Toxic == toxic && x.Disabled == disabled {
				return x
			}
		}
		return nil
	}
	now := time.Now()
	var found, dead []Leftover
	judge := func(l Leftover) {
		x := l.Entry
		switch {
		case x == nil:
			l.Why = notJournaled(l, journal)
			found = append(found, l)
		case gone(*x, now):
			dead = append(dead, l)
		case x.owner() == owner.Self():
			l.Why = fmt.Sprintf("run %s of this gameday process added it and could not remove it; gameday cleanup removes it once this process has ended, or %s", x.RunID, byHand(l))
			found = append(found, l)
		default:
			l.Why = fmt.Sprintf("run %s added it, and its runner is %s: another drill is using this proxy; wait until it ends (a runner killed elsewhere is judged gone once its lease has run out, and gameday cleanup then removes it)", x.RunID, x.Runner(now))
			found = append(found, l)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(set(proxies))) {
		p, ok := ps[name]
		if !ok {
			continue
		}
		for _, t := range p.Toxics {
			judge(Leftover{Toxiproxy: c.Addr(), Proxy: name, Toxic: &t, Entry: find(name, t.Name, false)})
		}
		if !p.Enabled {
			judge(Leftover{Toxiproxy: c.Addr(), Proxy: name, Entry: find(name, "", true)})
		}
	}
	if len(found) > 0 {
		return nil, &LeftoverError{Found: found}
	}
	if len(dead) == 0 {
		return nil, nil
	}
	picked := map[Entry]bool{}
	for _, l := range dead {
		picked[key(*l.Entry)] = true
	}
	removed, aside, err := j.cleanup(ctx, func(x Entry) bool { return picked[key(x)] })
	if err != nil {
		return removed, err
	}
	for _, x := range aside {
		for _, l := range dead {
			if key(*l.Entry) == key(x) {
				l.Entry = &x
				l.Why = fmt.Sprintf("run %s added it and its runner is gone, but removing it failed: %s; %s, then gameday cleanup -drop %s", x.RunID, x.SetAside, byHand(l), x.RunID)
				found = append(found, l)
			}
		}
	}
	if len(found) > 0 {
		return removed, &LeftoverError{Found: found}
	}
	return removed, nil
}

// key is what identifies a proxy's entry (Remove's match).
func key(x Entry) Entry {
	return Entry{RunID: x.RunID, Toxiproxy: x.Toxiproxy, Proxy: x.Proxy, Toxic: x.Toxic, Disabled: x.Disabled}
}

func set(names []string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// sameAPI reports whether two addresses name one Toxiproxy API, written
// as host:port or as a URL.
func sameAPI(a, b string) bool { return toxi.NewClient(a).Addr() == toxi.NewClient(b).Addr() }

// gamedayToxic is the name a gameday run gives its toxics.
var gamedayToxic = regexp.MustCompile(`^gameday-([0-9a-z]+)-`)

// notJournaled says why l, which the journal at journal ("": none) does
// not hold, is not removed, and how to remove it.
func notJournaled(l Leftover, journal string) string {
	in := "in the journal " + journal
	if journal == "" {
		in = "(this drill keeps no journal)"
	}
	if l.Toxic != nil {
		if m := gamedayToxic.FindStringSubmatch(l.Toxic.Name); m != nil {
			return fmt.Sprintf("gameday run %s named it, but did not journal it %s: that run kept another journal (-journal, $GAMEDAY_JOURNAL) or ran on another host, where gameday cleanup removes it once its runner is gone; or %s", m[1], in, byHand(l))
		}
	}
	return fmt.Sprintf("no gameday run journaled it %s; %s", in, byHand(l))
}

// byHand says how to remove l with toxiproxy-cli or curl.
func byHand(l Leftover) string {
	api := redact.URL(l.Toxiproxy)
	path := api + "/proxies/" + url.PathEscape(l.Proxy)
	if l.Toxic == nil {
		return fmt.Sprintf("enable it: toxiproxy-cli -h %s toggle %s (or curl -X POST -d '{\"enabled\":true}' %s)", api, shellQuote(l.Proxy), path)
	}
	return fmt.Sprintf("remove it: toxiproxy-cli -h %s toxic remove -n %s %s (or curl -X DELETE %s/toxics/%s)", api, shellQuote(l.Toxic.Name), shellQuote(l.Proxy), path, url.PathEscape(l.Toxic.Name))
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=-]+$`)

// shellQuote is s as one word of a shell command.
func shellQuote(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
