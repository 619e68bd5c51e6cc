package scenarios

import (
	"github.com/gameday-dev/gameday/internal/strictyaml"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/Shopify/toxiproxy/v2/toxics"
	"go.yaml.in/yaml/v3"

	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/gameday/toxi/tcp"
)

// wantErr is one expected *Error: its line, field path and a part of its
// message.
type wantErr struct {
	line  int
	field string
	msg   string
}

// Each file in testdata/bad is a variation of testdata/good/tiny.yaml with
// one problem (many-problems has three), and its first line says which.
func TestBadFiles(t *testing.T) {
	cases := []struct {
		file string
		want []wantErr
	}{
		// A misspelt key is an error, not silently ignored.
		{"unknown-key", []wantErr{{4, "stok", "unknown field (known: abort, checkout,"}}},
		// The same deeper down, with the path to it.
		{"unknown-nested-key", []wantErr{{12, "faults[0].duration", "unknown field (known: at, cache, down, for,"}}},
		// A repeated key would silently win; it names both lines.
		{"duplicate-key", []wantErr{{5, "stock", "given twice (first on line 4)"}}},
		// A string where a number is wanted.
		{"wrong-type", []wantErr{{4, "stock", `want a whole number, got string "ten"`}}},
		// Durations are strings with a unit, never bare numbers.
		{"bare-duration", []wantErr{{12, "faults[0].for", `2 is a bare number, not a duration (write "2s")`}}},
		// A quoted number has no unit either.
		{"unitless-duration", []wantErr{{12, "faults[0].for", `"2" is not a duration (write "2s")`}}},
		// No duration is negative.
		{"negative-duration", []wantErr{{11, "faults[0].at", `"-1s" is negative`}}},
		// Anchors are refused before anything is expanded.
		{"anchor-alias", []wantErr{{7, "load.stages[0]", "anchors (&stage) are not allowed"}}},
		// One file, one scenario; the line is the second document's start.
		{"two-documents", []wantErr{{18, "", "more than one YAML document"}}},
		// Toxiproxy has no such toxic.
		{"unknown-toxic", []wantErr{{14, "faults[0].toxic.type", `unknown toxic type "lag" (known: bandwidth, http_error, http_latency,`}}},
		// The latency toxic has no delay attribute (slicer and slow_close do).
		{"unknown-attribute", []wantErr{{15, "faults[0].toxic.attributes.delay", "unknown attribute of a latency toxic (known: jitter, latency)"}}},
		// Toxiproxy's own milliseconds are not accepted: write a unit.
		{"attribute-bare-number", []wantErr{{15, "faults[0].toxic.attributes.latency", `1000 is a bare number, not a duration (write "1000ms")`}}},
		// A fault is exactly one thing.
		{"toxic-and-down", []wantErr{{9, "faults[0]", "set exactly one of toxic, down, process and cache (2 set)"}}},
		// A cache fault does one thing to the data.
		{"cache-two-actions", []wantErr{{12, "faults[0].cache", "set exactly one of flush, expire and maxmemory (2 set)"}}},
		// A limit Redis reads as none, or one an empty Redis already fills,
		// and a policy Redis does not have.
		{"cache-maxmemory", []wantErr{
			{13, "faults[0].cache.maxmemory", `"0" is below 1mb: Redis reads 0 as no limit`},
			{18, "faults[1].cache.maxmemory", `"100kb" is below 1mb`},
			{18, "faults[1].cache.policy", `"lru" is not one of noeviction, allkeys-lru`},
			{23, "faults[2].cache.maxmemory", `"150%": a share of what the Redis uses is a whole percentage from 1% to 99%`},
		}},
		// A repeat needs an end; a pattern has no spaces; ttl is an
		// expiry's.
		{"cache-every", []wantErr{
			{12, "faults[0].cache.every", "needs the fault's for"},
			{17, "faults[1].cache.flush", "a key pattern (Redis's glob: product:*)"},
			{17, "faults[1].cache.ttl", "only for expire"},
			{22, "faults[2].cache.ttl", "1s is not shorter than every (1s)"},
		}},
		// Each limit puts back what it found.
		{"cache-limits-overlap", []wantErr{{16, "faults[1].at", "a memory limit of sessions while faults[0]'s is on it"}}},
		// A promise about a fault that does not exist.
		{"missing-fault", []wantErr{{17, "expect[0].breaker_opens.fault", `no fault is named "slow-payment" (faults: slow)`}}},
		{"bad-window", []wantErr{{18, "expect[1].latency.window", `"sometimes" is not one of before, during, after, all`}}},
		{"bad-outcome", []wantErr{{18, "expect[1].ratio.outcomes[0]", `"bought" is not one of confirmed, declined,`}}},
		{"ratio-bounds", []wantErr{{18, "expect[1].ratio.at_least", "0.9 is above at_most (0.5)"}}},
		// A fault must start while the load runs.
		{"fault-after-load", []wantErr{{11, "faults[0].at", "12s is not before the end of the load (10s)"}}},
		// A missing required field is reported on the mapping that lacks it.
		{"no-stock", []wantErr{{2, "stock", "required: the number of units on sale"}}},
		// The YAML library's syntax errors keep their line (the tab's own).
		{"syntax-error", []wantErr{{10, "", "bad YAML: found a tab character that violates indentation (indent with spaces)"}}},
		{"not-a-mapping", []wantErr{{2, "", "want a mapping of scenario fields"}}},
		// An external environment has no process of ours (a system file
		// can declare one).
		{"external-process", []wantErr{{13, "faults[0].process", "needs a process to act on"}}},
		// One process fault at a time on a dependency (the next one may
		// begin as it ends; another dependency's is another process).
		{"process-faults-overlap", []wantErr{{10, "faults[1].at", "pause of inventory while faults[0] (kill) is on it: one process fault at a time on a dependency"}}},
		// A negative number into an unsigned field.
		{"negative-uint", []wantErr{{20, "checkout.payment.failures", "-1 is negative"}}},
		// Only payment has a line of its own, and no line is negative.
		{"inventory-slots", []wantErr{{20, "checkout.inventory.slots", "only payment has a line of its own"}}},
		{"negative-slots", []wantErr{{20, "checkout.payment.slots", "-2 is negative (0 means no line)"}}},
		{"bad-invariant", []wantErr{{19, "invariants.allow.oversell", `"oversell" is not one of oversold,`}}},
		// Toxiproxy reads toxicity 0 as 1.
		{"toxicity-zero", []wantErr{{14, "faults[0].toxic.toxicity", "0 is not in (0, 1]"}}},
		// Validation reports every problem, in line order.
		{"many-problems", []wantErr{
			{4, "stock", "required"},
			{10, "faults[0].target", `"Cart Service": a dependency's name is lower-case letters`},
			{17, "expect[0].breaker_opens.within", "required: how soon"},
			{17, "expect[0].breaker_opens.fault", "no fault targets payment"},
		}},
		// A file with no document at all.
		{"empty", []wantErr{{0, "", "no YAML document"}}},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.file] = true
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("testdata", "bad", c.file+".yaml")
			s, err := LoadFile(path)
			if err == nil {
				t.Fatalf("LoadFile(%s) = %+v, want an error", path, s)
			}
			checkErrors(t, err, path, c.want)
		})
	}
	files, _ := filepath.Glob("testdata/bad/*.yaml")
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".yaml"); !seen[name] {
			t.Errorf("%s has no row in the table", f)
		}
	}
}

// checkErrors checks that err is exactly the *Errors in want, in order.
func checkErrors(t *testing.T, err error, file string, want []wantErr) {
	t.Helper()
	got := Errors(err)
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(got), len(want), err)
	}
	for i, w := range want {
		g := got[i]
		if g.File != file || g.Line != w.line || g.Field != w.field || !strings.Contains(g.Msg, w.msg) {
			t.Errorf("error %d = %q\n  (file %q line %d field %q)\nwant file %q line %d field %q, message containing %q",
				i, g.Error(), g.File, g.Line, g.Field, file, w.line, w.field, w.msg)
		}
	}
}

// Inline cases for what a file of its own would not make clearer.
func TestParseErrors(t *testing.T) {
	tiny, err := os.ReadFile("testdata/good/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const head = "name: x\nmatrix: {dependency: none, failure: baseline}\nstock: 1\n"
	cases := []struct {
		name string
		yaml string
		want []wantErr
	}{
		// An alias on its own is refused before it could be expanded (the
		// anchor it points to comes first, so that is what is named).
		{"billion laughs", "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n", []wantErr{{1, "a", "anchors (&a) are not allowed"}}},
		// Keys must be plain names.
		{"number key", "name: x\n1: y\n", []wantErr{{2, "", "keys must be plain names, got a number"}}},
		// Merge keys are refused like the aliases they usually come with.
		{"merge key", "load:\n  <<: {patience: 1s}\n", []wantErr{{2, "load", "merge keys (<<) are not allowed"}}},
		// A plan no drill needs: a typo in a target or a duration.
		{"huge plan", head + "load:\n  stages: [{duration: 1h, target: 2000}]\n", []wantErr{{5, "load.stages", "the plan has 3.6e+06 arrivals, more than 3000000"}}},
		{"retries", head + "load:\n  stages: [{duration: 1s, target: 1}]\n  max_retries: 101\n", []wantErr{{6, "load.max_retries", "101 is not between 0 and 100"}}},
		{"days long", head + "load:\n  stages: [{duration: 2562047h, target: 1}, {duration: 2562047h, target: 1}]\n", []wantErr{{5, "load.stages", "the load lasts more than 24h0m0s"}}},
		// A drill without a matrix row is told how to say it has none.
		{"no matrix", "name: x\nstock: 1\nload:\n  stages: [{duration: 1s, target: 1}]\n", []wantErr{{1, "matrix.dependency", "or none for a drill without a fault (matrix: {dependency: none, failure: baseline})"}, {1, "matrix.failure", "(baseline for a drill without a fault)"}}},
		// A mapping where a list is wanted.
		{"stages not a list", "load:\n  stages: {duration: 1s}\n", []wantErr{{2, "load.stages", "want a list, got a mapping"}}},
		// Numbers must be finite.
		{"infinite target", "load:\n  stages:\n    - {duration: 1s, target: .inf}\n", []wantErr{{3, "load.stages[0].target", "want a finite number, got .inf"}}},
		// Out of range for the Go type.
		{"int overflow", "load:\n  max_shoppers: 99999999999999999999\n", []wantErr{{2, "load.max_shoppers", "out of range"}}},
		{"int32 overflow", "checkout:\n  payment: {failures: 4294967296}\n", []wantErr{{2, "checkout.payment.failures", "out of range"}}},
		// A fraction where a count is wanted.
		{"fraction", "stock: 1.5\n", []wantErr{{1, "stock", "want a whole number, got 1.5"}}},
		// A boolean field takes only true or false.
		{"bool", "faults:\n  - down: yes\n", []wantErr{{2, "faults[0].down", `want true or false, got string "yes"`}}},
		// A custom tag is not a string.
		{"custom tag", "name: !secret x\n", []wantErr{{1, "name", "want a string"}}},
		// A duration given as a mapping.
		{"duration mapping", "load:\n  patience: {s: 1}\n", []wantErr{{2, "load.patience", "want a duration string"}}},
		// Toxic attributes are scalars.
		{"attribute list", "faults:\n  - toxic:\n      attributes: {latency: [1s]}\n", []wantErr{{3, "faults[0].toxic.attributes.latency", "want a number or a duration string, got a list"}}},
		// Two documents, the second one broken.
		{"second document broken", "name: x\n---\n: : :\n", []wantErr{{2, "", "more than one YAML document"}}},
		// Validation: a fault outlasting the load, even by an overflowing
		// amount.
		{"fault too long", strings.Replace(string(tiny), "for: 5s", "for: 2562047h", 1), []wantErr{{12, "faults[0].for", "from 2s ends after the load (10s)"}}},
		// Validation: percentile 0 is not a percentile.
		{"percentile", string(tiny) + "  - latency: {percentile: 0, below: 1s}\n", []wantErr{{18, "expect[1].latency.percentile", "want a percentile above 0"}}},
		// Validation: a latency promise is of requests or purchases, and
		// a purchase ends in a final outcome, never retry_later.
		{"latency of", string(tiny) + "  - latency: {percentile: 95, below: 1s, of: carts}\n", []wantErr{{18, "expect[1].latency.of", `"carts" is not one of requests, purchases`}}},
		{"purchase outcome", string(tiny) + "  - latency: {percentile: 95, below: 1s, of: purchases, outcomes: [retry_later]}\n",
			[]wantErr{{18, "expect[1].latency.outcomes[0]", `"retry_later" is not one of confirmed,`}}},
		// Validation: an expectation with two kinds.
		{"two kinds", string(tiny) + "  - {degraded: {}, latency: {percentile: 95, below: 1s}}\n", []wantErr{{18, "expect[1]", "set exactly one of"}}},
		// Validation: a breaker cannot close after a fault that never ends.
		{"closes after endless fault", strings.Replace(string(tiny), "    for: 5s\n", "", 1) + "  - breaker_closes: {dependency: payment, within: 5s}\n", []wantErr{{17, "expect[1].breaker_closes.fault", `fault "slow" never ends`}}},
		// Validation: during needs a fault.
		{"during without fault", head + "load:\n  stages: [{duration: 1s, target: 1}]\nexpect:\n  - degraded: {window: during}\n", []wantErr{{7, "expect[0].degraded.window", "the scenario has no fault"}}},
		// Validation: two faults with one name.
		{"duplicate fault name", string(tiny)[:strings.Index(string(tiny), "expect:")] + "  - {name: slow, target: payment, at: 1s, for: 1s, down: true}\n", []wantErr{{16, "faults[1].name", `"slow" is also the name of faults[0]`}}},
		// Validation: an external environment needs its addresses and a
		// proxy for every fault target.
		{"external", string(tiny) + "environment: {kind: external, toxiproxy: nowhere}\n", []wantErr{
			{10, "faults[0].target", "no proxy for payment in environment.proxies"},
			{18, "environment.toxiproxy", `"nowhere": want host:port`},
			{18, "environment.checkout_url", "required in an external environment"},
		}},
		// Validation: a local environment creates its own proxies.
		{"local with proxies", string(tiny) + "environment:\n  proxies: {payment: p}\n", []wantErr{{19, "environment.proxies", "only for an external environment"}}},
		// Validation: the stand-in's latencies in order.
		{"payment latencies", string(tiny) + "payment: {min_latency: 2s, max_latency: 1s, decline_rate: 1.5}\n", []wantErr{
			{18, "payment.min_latency", "2s is above max_latency (1s)"},
			{18, "payment.decline_rate", "1.5 is not between 0 and 1"},
		}},
		// Validation: a slicer's variation below its average size.
		{"slicer", strings.NewReplacer("type: latency", "type: slicer", "{latency: 1s}", "{average_size: 10, size_variation: 10, delay: 1500ns}").Replace(string(tiny)), []wantErr{
			{15, "faults[0].toxic.attributes.delay", "1.5µs is not a whole number of microseconds"},
			{15, "faults[0].toxic.attributes.size_variation", "10 must be less than average_size (10)"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse("inline.yaml", []byte(c.yaml))
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", s)
			}
			checkErrors(t, err, "inline.yaml", c.want)
		})
	}
}

// A process fault may target the payment stand-in: its books survive a kill.
func TestProcessFaultOnPayment(t *testing.T) {
	tiny := readFile(t, "testdata/good/tiny.yaml")
	for _, process := range []string{"kill", "restart", "pause"} {
		t.Run(process, func(t *testing.T) {
			src := strings.Replace(tiny, "    toxic:\n      type: latency\n      attributes: {latency: 1s}\n", "    process: "+process+"\n", 1)
			if src == tiny {
				t.Fatal("tiny.yaml no longer has the toxic this test replaces")
			}
			s, err := Parse("inline.yaml", []byte(src))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if f := s.Faults[0]; f.Target != "payment" || f.Process != process || f.Toxic != nil {
				t.Fatalf("fault = %+v, want %s on payment", f, process)
			}
		})
	}
}

func TestOversized(t *testing.T) {
	big := append([]byte("name: x\ndescription: \""), bytes.Repeat([]byte("a"), MaxSize)...)
	big = append(big, "\"\n"...)
	_, err := Parse("big.yaml", big)
	checkErrors(t, err, "big.yaml", []wantErr{{0, "", "larger than 1048576 bytes"}})

	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, big, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadFile(path)
	checkErrors(t, err, path, []wantErr{{0, "", "larger than 1048576 bytes"}})
}

func TestLoadFileMissing(t *testing.T) {
	_, err := LoadFile(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadFile of a missing file: %v, want one wrapping os.ErrNotExist", err)
	}
}

// The defaults documented on the types are the ones Parse writes.
func TestDefaults(t *testing.T) {
	s, err := LoadFile("testdata/good/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"seed", s.Seed, int64(1)},
		{"environment", s.Environment.Kind, "local"},
		{"mode", s.Checkout.Mode, "reserve"},
		{"lease ttl", s.Checkout.LeaseTTL.D(), 30 * time.Second},
		{"retry after", s.Checkout.RetryAfter.D(), time.Second},
		{"payment timeout", s.Checkout.Payment.Timeout.D(), 2 * time.Second},
		{"inventory timeout", s.Checkout.Inventory.Timeout.D(), 250 * time.Millisecond},
		{"sessions timeout", s.Checkout.Sessions.Timeout.D(), 100 * time.Millisecond},
		{"probe timeout", s.Checkout.Payment.ProbeTimeout.D(), time.Duration(0)},
		{"failures", s.Checkout.Sessions.Failures, uint32(5)},
		{"open for", s.Checkout.Inventory.OpenFor.D(), 5 * time.Second},
		{"max concurrent", s.Checkout.Payment.MaxConcurrent, 64},
		{"min latency", s.Payment.MinLatency.D(), 100 * time.Millisecond},
		{"max latency", s.Payment.MaxLatency.D(), 400 * time.Millisecond},
		{"decline rate", s.Payment.DeclineRate, 0.0},
		{"patience", s.Load.Patience.D(), 10 * time.Second},
		{"retry jitter", *s.Load.RetryJitter, 0.5},
		{"session share", *s.Load.SessionShare, 1.0},
		{"max shoppers", s.Load.MaxShoppers, 0},
		{"shopper pool", s.Load.ShopperPool(), 100},
		{"stream", s.Faults[0].Toxic.Stream, "downstream"},
		{"toxicity", *s.Faults[0].Toxic.Toxicity, 1.0},
		{"breaker fault", s.Expect[0].BreakerOpens.Fault, "slow"},
		{"abort", s.Abort, (*Abort)(nil)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}

	// Fault names, windows and degraded counts.
	src := strings.Replace(readFile(t, "testdata/good/tiny.yaml"), "  - name: slow\n    target", "  - target", 1) +
		"  - latency: {percentile: 95, below: 1s}\n  - degraded: {}\n"
	s, err = Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Faults[0].Name; got != "payment-latency-0" {
		t.Errorf("default fault name %q, want payment-latency-0", got)
	}
	if got := s.Expect[0].BreakerOpens.Fault; got != "payment-latency-0" {
		t.Errorf("breaker expectation's fault %q, want the first fault on payment", got)
	}
	if w := s.Expect[1].Latency.Window; w != WindowDuring {
		t.Errorf("latency window %q with a fault, want during", w)
	}
	if d := s.Expect[2].Degraded; d.Window != WindowDuring || d.AtLeast != 1 {
		t.Errorf("degraded = %+v, want during, at least 1", d)
	}

	// With no fault the windows default to all, and a set session share
	// of 0 means all shoppers (its documented meaning).
	s, err = Parse("x.yaml", []byte("name: x\nmatrix: {dependency: none, failure: baseline}\nstock: 1\nload:\n  stages: [{duration: 1s, target: 1}]\n  session_share: 0\n  retry_jitter: 0\nexpect:\n  - ratio: {outcomes: [confirmed], at_least: 0.5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Expect[0].Ratio.Window; w != WindowAll {
		t.Errorf("ratio window %q without a fault, want all", w)
	}
	if *s.Load.SessionShare != 1 || *s.Load.RetryJitter != 0 {
		t.Errorf("session share %v, retry jitter %v; want 1 and 0 (as written)", *s.Load.SessionShare, *s.Load.RetryJitter)
	}

	// An external environment keeps the checkout's settings zero: they
	// are not ours to report.
	s, err = Parse("x.yaml", []byte(readFile(t, "testdata/good/tiny.yaml")+"environment:\n  kind: external\n  toxiproxy: 127.0.0.1:8474\n  proxies: {payment: pay}\n  checkout_url: http://127.0.0.1:8080\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Checkout != (Checkout{}) || s.Payment != (Payment{}) {
		t.Errorf("external: checkout %+v, payment %+v; want zero", s.Checkout, s.Payment)
	}
	// SetDefaults is idempotent.
	before := *s.Clone()
	s.SetDefaults()
	if s.Seed != before.Seed || s.Faults[0].Name != before.Faults[0].Name {
		t.Error("SetDefaults changed a parsed scenario")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want time.Duration
		err  string
	}{
		{`"250ms"`, 250 * time.Millisecond, ""},
		{`1m30s`, 90 * time.Second, ""},
		{`"0"`, 0, ""},
		{`~`, 0, ""},
		{`2`, 0, `2 is a bare number, not a duration (write "2s")`},
		{`1.5`, 0, `1.5 is a bare number`},
		{`"2"`, 0, `"2" is not a duration (write "2s")`},
		// A number large enough to mean milliseconds is offered both.
		{`300`, 0, `300 is a bare number, not a duration (write "300ms" or "300s")`},
		{`"300"`, 0, `"300" is not a duration (write "300ms" or "300s")`},
		{`soon`, 0, `"soon" is not a duration (write a number and a unit`},
		{`-1s`, 0, `"-1s" is negative`},
		{`[1s]`, 0, "want a duration string"},
		{`true`, 0, "not a duration"},
	} {
		var d Duration
		err := yaml.Unmarshal([]byte(c.yaml), &d)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.yaml, err)
		case c.err == "" && d.D() != c.want:
			t.Errorf("%s = %v, want %v", c.yaml, d, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.yaml, err, c.err)
		}
	}

	// Marshalled as strings, in YAML and JSON, and read back.
	v := struct {
		D Duration `yaml:"d" json:"d"`
	}{Duration(1500 * time.Millisecond)}
	y, err := yaml.Marshal(v)
	if err != nil || string(y) != "d: 1.5s\n" {
		t.Errorf("yaml: %q, %v", y, err)
	}
	j, err := json.Marshal(v)
	if err != nil || string(j) != `{"d":"1.5s"}` {
		t.Errorf("json: %s, %v", j, err)
	}
	v.D = 0
	if err := json.Unmarshal(j, &v); err != nil || v.D.D() != 1500*time.Millisecond {
		t.Errorf("json round trip: %v, %v", v.D, err)
	}
	if err := json.Unmarshal([]byte(`{"d":"-1s"}`), &v); err == nil {
		t.Error("json: a negative duration was accepted")
	}
}

func TestAPIAttributes(t *testing.T) {
	for _, c := range []struct {
		toxic Toxic
		want  map[string]any
		err   string
	}{
		{Toxic{Type: "latency", Attributes: map[string]any{"latency": "1s", "jitter": Duration(100 * time.Millisecond)}},
			map[string]any{"latency": int64(1000), "jitter": int64(100)}, ""},
		{Toxic{Type: "timeout", Attributes: map[string]any{"timeout": time.Duration(0)}}, map[string]any{"timeout": int64(0)}, ""},
		{Toxic{Type: "reset_peer", Attributes: map[string]any{"timeout": "2s"}}, map[string]any{"timeout": int64(2000)}, ""},
		{Toxic{Type: "slow_close", Attributes: map[string]any{"delay": "250ms"}}, map[string]any{"delay": int64(250)}, ""},
		// Slicer's delay is in microseconds in Toxiproxy.
		{Toxic{Type: "slicer", Attributes: map[string]any{"average_size": 64, "size_variation": int64(16), "delay": "1ms"}},
			map[string]any{"average_size": int64(64), "size_variation": int64(16), "delay": int64(1000)}, ""},
		{Toxic{Type: "bandwidth", Attributes: map[string]any{"rate": float64(100)}}, map[string]any{"rate": int64(100)}, ""},
		{Toxic{Type: "limit_data", Attributes: map[string]any{"bytes": uint32(1024)}}, map[string]any{"bytes": int64(1024)}, ""},
		{Toxic{Type: "noop"}, map[string]any{}, ""},
		{Toxic{Type: "latency", Attributes: map[string]any{"latency": "1500us"}}, nil, "not a whole number of milliseconds"},
		{Toxic{Type: "latency", Attributes: map[string]any{"latency": 1000}}, nil, `write "1000ms"`},
		{Toxic{Type: "latency"}, nil, "a latency toxic needs latency"},
		{Toxic{Type: "bandwidth", Attributes: map[string]any{"rate": "fast"}}, nil, `want a whole number of KB/s, got the string "fast"`},
		{Toxic{Type: "bandwidth", Attributes: map[string]any{"rate": 1.5}}, nil, "want a whole number of KB/s, got 1.5"},
		{Toxic{Type: "limit_data", Attributes: map[string]any{"bytes": -1}}, nil, "-1 is negative"},
		{Toxic{Type: "lag"}, nil, `unknown toxic type "lag"`},
		{Toxic{Type: "lost_reply", Attributes: map[string]any{"match": "(?i)commit", "first": 3, "every": 2, "probability": 0.5, "then": "hold", "seed": 42}},
			map[string]any{"match": "(?i)commit", "first": int64(3), "every": int64(2), "probability": 0.5, "then": "hold", "seed": int64(42)}, ""},
		{Toxic{Type: "lost_reply", Attributes: map[string]any{"probability": 1}}, map[string]any{"probability": 1.0}, ""},
		{Toxic{Type: "lost_reply"}, map[string]any{}, ""},
		{Toxic{Type: "lost_reply", Attributes: map[string]any{"match": "(commit"}}, nil, "attributes.match: not a regular expression"},
		{Toxic{Type: "lost_reply", Attributes: map[string]any{"match": 5}}, nil, "want a regular expression (a string), got 5"},
		{Toxic{Type: "lost_reply", Attributes: map[string]any{"then": "drop"}}, nil, `want one of reset, hold, got the string "drop"`},
		{Toxic{Type: "lost_reply", Attributes: map[string]any{"probability": 2}}, nil, "want a number from 0 to 1, got 2"},
		{Toxic{Type: "lost_reply", Attributes: map[string]any{"first": -1}}, nil, "-1 is negative"},
		{Toxic{Type: "lost_reply", Attributes: map[string]any{"every": "often"}}, nil, `want a whole number, got the string "often"`},
		{Toxic{Type: "lost_reply", Attributes: map[string]any{"hits": 1}}, nil, "unknown attribute of a lost_reply toxic"},
		{Toxic{Type: "http_error", Attributes: map[string]any{"status": 429, "retry_after": "2", "method": "POST", "path": "^/v1/charges", "header": "Idempotency-Key: .", "every": 3}},
			map[string]any{"status": int64(429), "retry_after": "2", "method": "POST", "path": "^/v1/charges", "header": "Idempotency-Key: .", "every": int64(3)}, ""},
		{Toxic{Type: "http_error", Attributes: map[string]any{"status": 200}}, nil, "want an HTTP error status (400 to 599), got 200"},
		{Toxic{Type: "http_error"}, nil, "a http_error toxic needs status"},
		{Toxic{Type: "http_error", Attributes: map[string]any{"status": 503, "header": "Idempotency-Key"}}, nil, `want "Name: expression"`},
		{Toxic{Type: "http_error", Attributes: map[string]any{"status": 503, "body": "a\nb"}}, nil, "want a line of text"},
		{Toxic{Type: "http_lost_response", Attributes: map[string]any{"then": "502"}}, map[string]any{"then": "502"}, ""},
		{Toxic{Type: "http_latency", Attributes: map[string]any{"latency": "1500ms", "path": "^/v1/charges"}}, map[string]any{"latency": int64(1500), "path": "^/v1/charges"}, ""},
		{Toxic{Type: "http_malformed", Attributes: map[string]any{"how": "garble"}}, nil, "want one of truncate, wrong_length, cut_json"},
	} {
		got, err := c.toxic.APIAttributes()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: error %v, want %q", c.toxic, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", c.toxic, err)
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("%+v = %v, want %v", c.toxic, got, c.want)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%+v: %s = %#v, want %#v", c.toxic, k, got[k], v)
			}
		}
	}
}

// Every toxic type Toxiproxy registers (gameday's Toxiproxy: its own and
// the request-aware ones) is known here with the attributes its struct
// takes, and no other; a request-aware toxic's hits are the relay's to
// fill, never a scenario's to set.
func TestToxicTypesMatchToxiproxy(t *testing.T) {
	var got []string
	for name, tx := range toxics.ToxicRegistry {
		got = append(got, name)
		var attrs []string
		for _, f := range reflect.VisibleFields(reflect.TypeOf(tx).Elem()) {
			// Leave out what gameday's Toxiproxy keeps for itself: a
			// toxic's hits, and the toxicity it draws itself (a scenario
			// sets it as the toxic's toxicity).
			if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); !f.Anonymous && f.IsExported() && tag != "" && tag != "-" && tag != "hits" && tag != tcp.ToxicityAttribute {
				attrs = append(attrs, tag)
			}
		}
		if RequestAware(name) != slices.Contains(toxi.RequestAwareToxics, name) {
			t.Errorf("%s: request-aware here %v, in gameday's Toxiproxy %v", name, RequestAware(name), !RequestAware(name))
		}
		slices.Sort(attrs)
		if ours := slices.Sorted(maps.Keys(toxicTypes[name])); !slices.Equal(ours, attrs) {
			t.Errorf("%s: our attributes %v, Toxiproxy's %v", name, ours, attrs)
		}
	}
	slices.Sort(got)
	if !slices.Equal(ToxicTypes(), got) {
		t.Errorf("ToxicTypes() = %v, Toxiproxy registers %v", ToxicTypes(), got)
	}
}

// However bad the input, the report stays readable: at most maxErrors
// problems and a count of the rest, and values from the input clipped.
func TestErrorsBounded(t *testing.T) {
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "key%d: 1\n", i)
	}
	errs := Errors(mustFail(t, b.String()))
	if len(errs) != maxErrors+1 || errs[maxErrors].Msg != "and 980 more problems" || errs[maxErrors].Line != 21 {
		t.Errorf("got %d errors, last %v", len(errs), errs[len(errs)-1])
	}

	long := strings.Repeat("é", 100000)
	for _, in := range []string{
		"name: " + long + "\n",
		long + ": 1\n",
		"load: {patience: " + long + "}\n",
		"stock: " + strings.Repeat("9", 100000) + "\n",
		"faults: [{toxic: {type: " + long + "}}]\n",
	} {
		for _, e := range Errors(mustFail(t, in)) {
			if len(e.Error()) > 600 || !utf8.ValidString(e.Error()) {
				t.Errorf("error of %d bytes, valid UTF-8 %v: %.100s...", len(e.Error()), utf8.ValidString(e.Error()), e.Error())
			}
		}
	}
}

func mustFail(t *testing.T, in string) error {
	t.Helper()
	_, err := Parse("x.yaml", []byte(in))
	if err == nil {
		t.Fatalf("Parse(%.40q) succeeded", in)
	}
	return err
}

// Every field of the scenario types is of a kind the decoder reads and has
// a yaml name, so adding a field cannot silently make it unreadable.
func TestDecoderCoversEveryField(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		if seen[ty] {
			return
		}
		seen[ty] = true
		if reflect.PointerTo(ty).Implements(strictyaml.UnmarshalerType) {
			return
		}
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice:
			walk(ty.Elem(), path+"[]")
		case reflect.Map:
			if ty.Key().Kind() != reflect.String {
				t.Errorf("%s: map keyed by %s", path, ty.Key())
			}
			walk(ty.Elem(), path+".*")
		case reflect.Struct:
			for i := range ty.NumField() {
				f := ty.Field(i)
				if !f.IsExported() {
					continue
				}
				tag := f.Tag.Get("yaml")
				if tag == "" {
					t.Errorf("%s.%s has no yaml tag", path, f.Name)
				}
				if tag != "-" {
					walk(f.Type, strictyaml.JoinPath(path, tag))
				}
			}
		case reflect.Interface:
			if ty.NumMethod() != 0 {
				t.Errorf("%s: interface %s", path, ty)
			}
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		default:
			t.Errorf("%s: the decoder cannot read a %s", path, ty)
		}
	}
	walk(reflect.TypeFor[Scenario](), "")
}
