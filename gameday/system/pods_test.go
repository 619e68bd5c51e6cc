package system

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

const podsFile = `
name: shop
base_url: http://127.0.0.1:8090
sku: s
purchase: {steps: [{url: /buy, headers: {Shop: "{{.Shop}}"}, answers: [{status: 200, outcome: confirmed}]}]}
dependencies:
  inventory: {listen: "${INV}", upstream: 127.0.0.1:6379}
  payment: {listen: 127.0.0.1:7001, upstream: 127.0.0.1:7000}
stores:
  api: {http: "${API}"}
books:
  stock: {available: {store: api, http: {path: "/stock/{{.SKU}}"}}}
pods:
  pod-1: {INV: 127.0.0.1:7101, API: "http://127.0.0.1:8101"}
  pod-2: {INV: 127.0.0.1:7102, API: "http://127.0.0.1:8102"}
`

func TestPodsAreCopiesOfOnePod(t *testing.T) {
	s, err := Parse("pods.yaml", []byte(podsFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(s.Dependencies)); !slices.Equal(got, []string{"payment", "pod-1/inventory", "pod-2/inventory"}) {
		t.Fatalf("dependencies %v", got)
	}
	if d := s.Dependencies["pod-2/inventory"]; d.Proxy != "pod-2-inventory" || d.Listen != "127.0.0.1:7102" {
		t.Fatalf("pod-2's inventory %+v: want its own listen and proxy", d)
	}
	if s.Dependencies["payment"].Proxy != "payment" {
		t.Fatalf("the shared payment's proxy is %q", s.Dependencies["payment"].Proxy)
	}
	p2, ok := s.Pod("pod-2")
	if !ok || p2.Stores["api"].HTTP != "http://127.0.0.1:8102" || !slices.Equal(s.PodNames(), []string{"pod-1", "pod-2"}) {
		t.Fatalf("pod-2's copy: %v %+v; pods %v", ok, p2, s.PodNames())
	}
	// The worker of a sharded load parses the system from its source and
	// gets the same one.
	src := s.Source()
	again, err := Parse(src.File, src.Data, src.Vars)
	if err != nil || !slices.Equal(slices.Sorted(maps.Keys(again.Dependencies)), slices.Sorted(maps.Keys(s.Dependencies))) {
		t.Fatalf("parsed again from its source: %v", err)
	}
}

func TestBadPodsNameTheirLine(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{`pod-2: {INV: 127.0.0.1:7102, API: "http://127.0.0.1:8102"}`, `pod-2: {API: "http://127.0.0.1:8102"}`, `pod pod-2: pods.yaml:7: dependencies.inventory.listen: ${INV} is not set`},
		{`pod-2: {INV: 127.0.0.1:7102,`, `Pod_2: {INV: 127.0.0.1:7102,`, `pods.Pod_2: "Pod_2": a pod's name is lower-case words`},
		{`inventory: {listen: "${INV}",`, `inventory: {proxy: inv, listen: "${INV}",`, `dependencies.inventory.proxy: pod-1 and pod-2 both put inventory behind proxy "inv"`},
		{`base_url: http://127.0.0.1:8090`, `base_url: "${API}"`, `base_url: http://127.0.0.1:8101 for pod-1 but http://127.0.0.1:8102 for pod-2`},
	} {
		src := strings.Replace(podsFile, c.from, c.to, 1)
		if src == podsFile {
			t.Fatalf("%q is not in the file", c.from)
		}
		_, err := Parse("pods.yaml", []byte(src), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.to, err, c.want)
		}
	}
}

// The system of pods docs/pods.md shows is one this parser takes as
// written, with the dependencies the text says it has.
func TestPodsExampleInTheDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/pods.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Pods of your own checkout\n")
	_, block, ok2 := strings.Cut(section, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/pods.md has no yaml block under \"Pods of your own checkout\"")
	}
	s, err := Parse("docs/pods.md", []byte(block), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(s.Dependencies)); !slices.Equal(got, []string{"payment", "pod-1/inventory", "pod-2/inventory"}) {
		t.Errorf("dependencies %v", got)
	}
	if p2, _ := s.Pod("pod-2"); p2 == nil || p2.Stores["db"].Postgres != "postgres://drill@10.0.2.6/shop" || p2.Admin != "http://10.0.2.7:8080" {
		t.Errorf("pod-2's copy %+v: want its own store and admin", p2)
	}
}
