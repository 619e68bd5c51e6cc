package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/scenarios"
)

func TestValidateCmd(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, good, "name: mine\nmatrix: {dependency: none, failure: baseline}\nstock: 5\nload:\n  stages: [{duration: 5s, target: 2}]\n")
	writeFile(t, bad, "name: mine\nmatrix: {dependency: none, failure: baseline}\nstock: 5\nload:\n  stages: [{duration: 5, target: 2}]\n  patince: 3s\n")
	wrongTarget := filepath.Join(dir, "wrong-target.yaml")
	writeFile(t, wrongTarget, "name: wrong\nsystem: "+abs(t, "../../examples/pyshop/gameday.yaml")+"\nmatrix: {dependency: mysql, failure: down}\nfaults:\n  - {name: f1, target: mysql, at: 1s, for: 1s, toxic: {type: timeout}}\n  - {name: f2, target: redis, at: 1s, for: 1s, process: kill}\nstock: 5\nload:\n  stages: [{duration: 5s, target: 2}]\n")
	cacheFaults := filepath.Join(dir, "cache-faults.yaml")
	writeFile(t, cacheFaults, "name: caches\nmatrix: {dependency: inventory, failure: cache-flush}\nstock: 5\nload:\n  stages: [{duration: 5s, target: 2}]\nfaults:\n  - {target: inventory, at: 1s, cache: {flush: \"*\"}}\n  - {target: payment, at: 1s, cache: {flush: \"*\"}}\n  - {target: sessions, at: 1s, cache: {flush: \"gameday:product:*\"}}\n")
	badSys := filepath.Join(dir, "gameday.yaml")
	writeFile(t, badSys, "name: shop\nbase_url: http://127.0.0.1:8080\nsku: s\npurchase:\n  steps:\n    - url: /buy\n      answers: [{status: 201, outcome: bought}]\n")

	ordersOnly := filepath.Join(dir, "orders-only.yaml")
	writeFile(t, ordersOnly, "name: orders-only\nbase_url: http://127.0.0.1:8080\nsku: s\npurchase:\n  steps:\n    - url: /buy\n      answers: [{status: 201, outcome: confirmed}]\ndependencies:\n  db: {listen: 127.0.0.1:15432, upstream: 127.0.0.1:5432}\nstores:\n  db: {postgres: \"postgres://127.0.0.1:5432/shop\"}\nbooks:\n  orders: {store: db, sql: \"SELECT cart AS checkout_id FROM orders\"}\n")
	all := "oversold, lost_units, units_created, stranded_units, double_charges, charges_without_order, orders_without_charge, charged_after_leaving, wrong_amounts, orders_told_failed, confirmed_without_order"
	// The examples keep no count of units sold beside their orders.
	noSold := []string{
		"    not judged: orders_beyond_sold (needs books.stock.sold and books.orders)",
		"    not judged: sold_without_order (needs books.stock.sold and books.orders)",
	}

	cases := []struct {
		name      string
		args      []string
		usage     bool     // a usageError (exit 2)
		stdout    []string // lines, in order
		stderrHas []string
		errHas    string
	}{
		// A catalogue name and a file, both good.
		{name: "good", args: []string{"baseline", good}, stdout: []string{
			"ok  baseline (catalogue:baseline)",
			"ok  mine (" + good + ")",
		}},
		// One bad file among good ones: the good are still reported, the
		// bad one's errors name file, line and field, and the exit is 2.
		{name: "bad", args: []string{"payment-latency", bad, good}, usage: true,
			stdout: []string{"ok  payment-latency (catalogue:payment-latency)", "ok  mine (" + good + ")"},
			stderrHas: []string{
				bad + `:5: load.stages[0].duration: 5 is a bare number, not a duration (write "5s")`,
				bad + ":6: load.patince: unknown field",
			},
			errHas: "validate: 1 of 3 files invalid"},
		// Cache faults on the reference checkout: never its books without
		// saying so, never a dependency that does not speak Redis; its
		// sessions' product cache is fair game.
		{name: "cache faults", args: []string{cacheFaults}, usage: true,
			stderrHas: []string{
				cacheFaults + ":7: faults[0].cache: inventory holds the books (reference-checkout",
				cacheFaults + ":8: faults[1].cache: a cache fault acts through Redis's own commands, and payment speaks http",
			},
			errHas: "validate: 1 of 1 files invalid"},
		// A system file given where a scenario is wanted: each key is
		// unknown to a scenario, and validate says to use --system.
		{name: "system as a scenario", args: []string{ordersOnly}, usage: true,
			stderrHas: []string{ordersOnly + ":4: purchase: unknown field",
				ordersOnly + " has a purchase: it looks like a system file: check it with gameday validate --system " + ordersOnly},
			errHas: "validate: 1 of 1 files invalid"},
		// System files: the shipped examples are good, a bad one names its
		// file, line and field.
		{name: "systems", args: []string{"--system", "../../examples/pyshop/gameday.yaml", "--system", badSys}, usage: true,
			stdout: slices.Concat([]string{
				"ok  pyshop (../../examples/pyshop/gameday.yaml): 1 step, 3 dependencies, 3 stores",
				"    judges: " + strings.Replace(all, "wrong_amounts", "wrong_amounts, accepted_not_finished", 1)}, noSold, []string{
				"    books read: once books.settled says they are final, asked every 200ms for at most 5s (settle_within)",
			}),
			stderrHas: []string{badSys + `:7: purchase.steps[0].answers[0].outcome: "bought": a purchase's answer means one of`},
			errHas:    "1 of 2 files invalid"},
		// A scenario is checked against the system it drills, its own
		// (system:) or the one --system: the pyshop drills pass; a fault on
		// a dependency pyshop does not have, or a process fault on one with
		// no handle, is refused at the fault's line.
		{name: "against its system", args: []string{"../../examples/pyshop/drills/postgres-reset.yaml", wrongTarget},
			usage: true, stdout: []string{"ok  pyshop-postgres-reset (../../examples/pyshop/drills/postgres-reset.yaml)"},
			stderrHas: []string{
				wrongTarget + `:5: faults[0].target: "mysql" is not a dependency of pyshop (` + abs(t, "../../examples/pyshop/gameday.yaml") + ": gateway, postgres, redis)",
				wrongTarget + ":6: faults[1].target: a process fault on redis needs a process to act on",
			},
			errHas: "1 of 2 files invalid"},
		{name: "against --system", args: []string{"--system", "../../examples/ticketshop/gameday.yaml", "../../examples/pyshop/drills/postgres-reset.yaml"},
			usage: true, stdout: slices.Concat([]string{
				"ok  ticketshop (../../examples/ticketshop/gameday.yaml): 2 steps, 2 dependencies, 2 stores",
				"    judges: " + all,
				"    not judged: accepted_not_finished (needs books.orders and books.settled)"}, noSold, []string{
				"    books read: 3s after the load ends (settle_after)",
			}),
			stderrHas: []string{`faults[0].target: "postgres" is not a dependency of ticketshop`}},
		// What a description leaves unjudged is said before any drill:
		// a system whose books are its orders only, read as the load ends.
		{name: "what is judged", args: []string{"--system", ordersOnly}, stdout: []string{
			"ok  orders-only (" + ordersOnly + "): 1 step, 1 dependency, 1 store",
			"    judges: orders_told_failed, confirmed_without_order",
			"    not judged: accepted_not_finished (needs books.orders and books.settled)",
			"    not judged: charged_after_leaving (needs books.charges)",
			"    not judged: charges_without_order (needs books.charges and books.orders)",
			"    not judged: double_charges (needs books.charges)",
			"    not judged: lost_units (needs books.stock (available, and initial or available before the load) and the units sold)",
			"    not judged: orders_beyond_sold (needs books.stock.sold and books.orders)",
			"    not judged: orders_without_charge (needs books.orders and books.charges)",
			"    not judged: oversold (needs books.stock (initial or available before the load) and the units sold (books.stock.sold or books.orders))",
			"    not judged: sold_without_order (needs books.stock.sold and books.orders)",
			"    not judged: stranded_units (needs books.stock.reserved, read after books.settled or settle_after)",
			"    not judged: units_created (needs books.stock (available, and initial or available before the load) and the units sold)",
			"    not judged: wrong_amounts (needs books.orders and books.charges, each with an amount in the same unit (or books.price in place of the orders' amounts))",
			"    books read: the moment the load ends: neither books.settled nor books.settle_after is given, so a purchase still finishing then (a hold, a charge, a void) is read half done: it can count as a lost unit, and a charge made after is not seen",
		}},
		// Flags may come after the files.
		{name: "flags after", args: []string{good, "--system", "../../examples/ticketshop/gameday.yaml"}, stdout: slices.Concat([]string{
			"ok  ticketshop (../../examples/ticketshop/gameday.yaml): 2 steps, 2 dependencies, 2 stores",
			"    judges: " + all,
			"    not judged: accepted_not_finished (needs books.orders and books.settled)"}, noSold, []string{
			"    books read: 3s after the load ends (settle_after)",
			"ok  mine (" + good + ")",
		})},
		// A name not in the catalogue lists the names that are.
		{name: "unknown name", args: []string{"payment-slow"}, usage: true,
			stderrHas: []string{`"payment-slow"`, "payment-latency, payment-lost-response, payment-timeouts"}, errHas: "1 of 1"},
		// A path that does not exist.
		{name: "missing file", args: []string{filepath.Join(dir, "nope.yaml")}, usage: true,
			stderrHas: []string{"no such file"}},
		{name: "nothing", args: nil, usage: true, errHas: "name a scenario file"},
		{name: "bad flag", args: []string{"-x"}, usage: true, errHas: "validate: flag provided but not defined"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := validateCmd(c.args, &stdout, &stderr)
			var ue usageError
			if got := errors.As(err, &ue); got != c.usage || (err != nil && !c.usage) {
				t.Fatalf("error %v, want usage error %v", err, c.usage)
			}
			if c.errHas != "" && (err == nil || !strings.Contains(err.Error(), c.errHas)) {
				t.Errorf("error %v, want it to contain %q", err, c.errHas)
			}
			if got := strings.Join(lines(stdout.String()), "\n"); got != strings.Join(c.stdout, "\n") {
				t.Errorf("stdout:\n%s\nwant:\n%s", got, strings.Join(c.stdout, "\n"))
			}
			for _, w := range c.stderrHas {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr %q does not contain %q", stderr.String(), w)
				}
			}
		})
	}

	// Every file the scenarios package tests as bad is refused here too.
	files, _ := filepath.Glob("../../scenarios/testdata/bad/*.yaml")
	if len(files) == 0 {
		t.Fatal("no bad files found")
	}
	var stdout, stderr bytes.Buffer
	err := validateCmd(files, &stdout, &stderr)
	if stdout.Len() != 0 || err == nil || !strings.Contains(err.Error(), "files invalid") {
		t.Errorf("bad files: stdout %q, error %v", stdout.String(), err)
	}
}

func TestValidateHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := validateCmd([]string{"-h"}, &stdout, &stderr); !errors.Is(err, errHelp) || !strings.Contains(stderr.String(), "gameday validate [--system FILE]... FILE|NAME") {
		t.Errorf("validate -h: %v, %q", err, stderr.String())
	}
}

func TestListCmd(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := listCmd(nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	out := lines(stdout.String())
	names := scenarios.CatalogueNames()
	if len(out) != len(names)+1 || !strings.HasPrefix(out[0], "NAME") || !strings.Contains(out[0], "MATRIX") || !strings.Contains(out[0], "DESCRIPTION") {
		t.Fatalf("list:\n%s", stdout.String())
	}
	col := strings.Index(out[0], "MATRIX")
	for i, n := range names {
		row := out[i+1]
		if !strings.HasPrefix(row, n+" ") {
			t.Errorf("row %d %q, want %s first", i, row, n)
		}
		if row[col-1] != ' ' || row[col] == ' ' {
			t.Errorf("row %q: matrix column not aligned at %d", row, col)
		}
	}
	if !regexp.MustCompile(`(?m)^payment-latency +payment/latency +Payment slows by 1 s`).MatchString(stdout.String()) {
		t.Errorf("list does not show payment-latency's row as expected:\n%s", stdout.String())
	}
	if err := listCmd([]string{"extra"}, &stdout, &stderr); !errors.As(err, new(usageError)) {
		t.Errorf("list extra: %v, want a usage error", err)
	}
}

func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func abs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
