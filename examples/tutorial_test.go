package examples_test

import (
	"go.yaml.in/yaml/v3"

	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/internal/mdblocks"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// The tutorial (docs/tutorial.md), walked as a newcomer walks it: its
// files, in the order it gives them, with the gameday command, against
// ticketshop started as it says (its addresses replaced by ports this test
// holds). Each step's drill must pass, with the books judged once the
// tutorial gives them.
func TestTutorial(t *testing.T) {
	files, err := mdblocks.ReadLang("../docs/tutorial.md", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The walk below follows the tutorial's shape: the system, a drill
	// without a fault, browsing (a journey, a stream of it in that drill),
	// the books, a dependency, a drill with a fault.
	want := []string{"system", "scenario", "system part", "scenario part", "system part", "system part", "scenario"}
	if len(files) != len(want) {
		t.Fatalf("the tutorial has %d YAML blocks, the walk expects %d (%v): change this test with it", len(files), len(want), want)
	}
	for i, b := range files {
		if b.Mark != want[i] {
			t.Fatalf("tutorial.md:%d is a %q block, the walk expects a %q one: change this test with it", b.Line, b.Mark, want[i])
		}
	}

	rs := testenv.Redis(t)
	gw := gateway(t)
	shopAddr, proxyAddr := testenv.FreeAddr(t), testenv.FreeAddr(t)
	// The tutorial's fixed addresses, and this test's.
	addrs := strings.NewReplacer(
		"127.0.0.1:8095", shopAddr, "127.0.0.1:6390", rs.Addr(),
		"127.0.0.1:18091", proxyAddr, "127.0.0.1:8091", gw)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "drills"), 0o755); err != nil {
		t.Fatal(err)
	}
	shop := filepath.Join(dir, "shop.yaml")
	write := func(name, text string, appendTo bool) {
		t.Helper()
		flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
		if appendTo {
			flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
		}
		f, err := os.OpenFile(name, flags, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(addrs.Replace(text)); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	drillFile := func(b mdblocks.Block) string {
		m := regexp.MustCompile(`(?m)^name: (\S+)$`).FindStringSubmatch(b.Text)
		if m == nil {
			t.Fatalf("tutorial.md:%d: a drill without a name", b.Line)
		}
		return filepath.Join(dir, "drills", m[1]+".yaml")
	}

	bin := filepath.Join(t.TempDir(), "gameday")
	if err := testenv.GoBuild(bin, "../cmd/gameday"); err != nil {
		t.Fatal(err)
	}
	shopBin := filepath.Join(t.TempDir(), "ticketshop")
	if err := testenv.GoBuild(shopBin, "./ticketshop"); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(t.TempDir(), "journal.json")
	gamedayCmd := func(args ...string) (string, int) {
		t.Helper()
		return runCmd(t, bin, dir, map[string]string{"GAMEDAY_JOURNAL": journal}, args...)
	}
	// lastRun is the record of the newest run under the runs directory.
	lastRun := func() *gameday.Record {
		t.Helper()
		runs, err := filepath.Glob(filepath.Join(dir, "runs", "*", "run.json"))
		if err != nil || len(runs) == 0 {
			t.Fatalf("no run.json under %s/runs (%v)", dir, err)
		}
		data, err := os.ReadFile(runs[len(runs)-1])
		if err != nil {
			t.Fatal(err)
		}
		var rec gameday.Record
		if err := json.Unmarshal(data, &rec); err != nil {
			t.Fatal(err)
		}
		return &rec
	}
	mustPass := func(step, drill string) *gameday.Record {
		t.Helper()
		out, code := gamedayCmd("run", drill)
		if code != 0 || !strings.Contains(out, "PASS") {
			t.Fatalf("step %s: gameday run %s: exit %d, want a pass:\n%s", step, drill, code, out)
		}
		return lastRun()
	}

	// 1. The service, reaching Redis and the gateway directly; the
	// tickets on sale.
	stop := serve(t, "http://"+shopAddr, shopBin, "-listen", shopAddr, "-redis", rs.Addr(), "-gateway", "http://"+gw)
	rc := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	t.Cleanup(func() { _ = rc.Close() })
	if err := rc.Set(context.Background(), "left:gala", 1000, 0).Err(); err != nil {
		t.Fatal(err)
	}

	// 2. How to buy.
	write(shop, files[0].Text, false)
	if out, code := gamedayCmd("validate", "--system", "shop.yaml"); code != 0 {
		t.Fatalf("step 2: gameday validate: exit %d:\n%s", code, out)
	}

	// 3. A sale with no fault.
	first := drillFile(files[1])
	write(first, files[1].Text, false)
	rel, _ := filepath.Rel(dir, first)
	rec := mustPass("3", rel)
	if len(rec.Unmatched) != 0 {
		t.Errorf("step 3: answers no rule of the tutorial matched: %+v", rec.Unmatched)
	}

	// 3, browsing: the event page as a journey, a stream of lookers in the
	// first drill, and a promise on the page.
	write(shop, "\n"+files[2].Text, true)
	write(first, overlay(t, files[1].Text, files[3].Text), false)
	rec = mustPass("3 (browsing)", rel)
	if len(rec.Expectations) != 2 || !rec.Expectations[1].Held || !strings.Contains(rec.Expectations[1].Observed, "requests") {
		t.Errorf("step 3 (browsing): expectations %+v, want the page's latency judged, and held", rec.Expectations)
	}

	// 4. The books: every invariant is judged, and holds, but those that
	// need facts the shop does not keep: a count of units sold beside its
	// orders, and a settled query.
	unkept := map[string]bool{"sold_without_order": true, "orders_beyond_sold": true, "accepted_not_finished": true}
	write(shop, "\n"+files[4].Text, true)
	if out, code := gamedayCmd("validate", "--system", "shop.yaml"); code != 0 || !strings.Contains(out, "judges: ") || !strings.Contains(out, "double_charges") {
		t.Fatalf("step 4: gameday validate: exit %d, want the invariants it judges listed:\n%s", code, out)
	}
	rec = mustPass("4", rel)
	for _, c := range rec.InvariantChecks {
		if c.NotChecked != unkept[c.Invariant] {
			t.Errorf("step 4: %s: not checked %v (needs %s)", c.Invariant, c.NotChecked, c.Needs)
		}
	}
	if len(rec.InvariantChecks) == 0 {
		t.Error("step 4: no invariant judged")
	}

	// 5. A dependency, the shop started again through its proxy, and a
	// fault on it.
	write(shop, "\n"+files[5].Text, true)
	stop()
	serve(t, "http://"+shopAddr, shopBin, "-listen", shopAddr, "-redis", rs.Addr(), "-gateway", "http://"+proxyAddr)
	slow := drillFile(files[6])
	write(slow, files[6].Text, false)
	rel, _ = filepath.Rel(dir, slow)
	rec = mustPass("5", rel)
	if len(rec.Faults) != 1 || rec.Faults[0].Error != "" {
		t.Errorf("step 5: faults %+v, want the tutorial's one, injected", rec.Faults)
	}

	// 6. The drills as a matrix: both rows due.
	if out, code := gamedayCmd("init", "-matrix", "resiliency-matrix.yaml", "drills/first-sale.yaml", "drills/gateway-slow.yaml"); code != 0 {
		t.Fatalf("step 6: gameday init: exit %d:\n%s", code, out)
	}
	out, code := gamedayCmd("matrix", "due", "resiliency-matrix.yaml")
	if code != 0 || !strings.Contains(out, "first-sale") || !strings.Contains(out, "gateway-slow") {
		t.Errorf("step 6: gameday matrix due: exit %d, want both drills due:\n%s", code, out)
	}
}

// overlay lays a scenario part's top-level keys over a whole scenario, as
// the tutorial asks the reader to.
func overlay(t *testing.T, whole, part string) string {
	t.Helper()
	var base, over yaml.Node
	if err := yaml.Unmarshal([]byte(whole), &base); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(part), &over); err != nil {
		t.Fatal(err)
	}
	m, o := base.Content[0], over.Content[0]
	for i := 0; i+1 < len(o.Content); i += 2 {
		replaced := false
		for j := 0; j+1 < len(m.Content); j += 2 {
			if m.Content[j].Value == o.Content[i].Value {
				m.Content[j+1], replaced = o.Content[i+1], true
			}
		}
		if !replaced {
			m.Content = append(m.Content, o.Content[i], o.Content[i+1])
		}
	}
	out, err := yaml.Marshal(&base)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
