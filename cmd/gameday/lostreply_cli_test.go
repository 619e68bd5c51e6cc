package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// payingShop is a shop whose /buy charges through a payment dependency
// at payAddr (its proxy's listen): 200 when the charge answered, 503 when
// it did not. provider counts the charges really made.
func payingShop(t *testing.T) (shop *httptest.Server, provider *httptest.Server, charges *atomic.Int64, payAddr string) {
	t.Helper()
	charges = new(atomic.Int64)
	provider = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/charge" {
			charges.Add(1)
		}
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(provider.Close)
	payAddr = testenv.FreeAddr(t)
	hc := &http.Client{Timeout: 2 * time.Second}
	shop = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := hc.Post("http://"+payAddr+"/charge", "application/json", strings.NewReader(`{}`))
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		resp.Body.Close()
	}))
	t.Cleanup(shop.Close)
	return shop, provider, charges, payAddr
}

// paySystem is the system file of that shop, its payment dependency
// behind a proxy at payAddr; extra goes at the top (toxiproxy: ...).
func paySystem(shop, provider, payAddr, extra string) string {
	return fmt.Sprintf(`name: shop
base_url: %s
sku: s
%spurchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}, {status: 503, outcome: unavailable}]}]}
dependencies:
  pay: {listen: %q, upstream: %q}
`, shop, extra, payAddr, strings.TrimPrefix(provider, "http://"))
}

const lostChargesDrill = `stock: 50
load:
  stages: [{duration: 2s, target: 5}]
faults:
  - name: charges-lost
    target: pay
    at: 0s
    toxic: {type: lost_reply, attributes: {match: "^POST /charge ", first: 2}}
`

// A lost_reply fault in a drill: the runner gives the dependency's proxy a
// relay, the first two charges are made and their answers lost, and
// run.json says so (matched, lost, the requests' first lines).
func TestLostReplyDrillRecordsItsHits(t *testing.T) {
	shop, provider, charges, payAddr := payingShop(t)
	code, printed, files := drillSystem(t, paySystem(shop.URL, provider.URL, payAddr, ""), lostChargesDrill)
	if code == exitUsage {
		t.Fatalf("exit %d:\n%s", code, printed)
	}
	var rec struct {
		Faults []struct {
			Name string
			Hits *struct {
				Matched, Lost int64
				First         []string
			}
		}
	}
	for p, body := range files {
		if strings.HasSuffix(p, "/run.json") {
			if err := json.Unmarshal([]byte(body), &rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(rec.Faults) != 1 || rec.Faults[0].Hits == nil {
		t.Fatalf("faults recorded: %+v\n%s", rec.Faults, printed)
	}
	h := rec.Faults[0].Hits
	if h.Lost != 2 || h.Matched < 2 || len(h.First) != 2 || h.First[0] != "POST /charge HTTP/1.1" {
		t.Errorf("hits %+v, want 2 lost of at least 2 matched, each by its request line", *h)
	}
	if n := charges.Load(); n < h.Matched {
		t.Errorf("the provider made %d charges, fewer than the %d requests matched: a lost answer's charge was not made", n, h.Matched)
	}
}

// Before anything is sent, a drill with a lost_reply fault is refused
// (exit 2, the scenario's file and field named) on a Toxiproxy that
// cannot serve it: a stock one, or a proxy of gameday's without a relay.
func TestLostReplyRefusedWhereItCannotBeServed(t *testing.T) {
	shop, provider, charges, payAddr := payingShop(t)
	e, err := toxi.StartEmbedded("127.0.0.1:0", toxi.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := toxi.NewClient(e.APIAddr()).CreateProxy(context.Background(), "pay", payAddr, strings.TrimPrefix(provider.URL, "http://")); err != nil {
		t.Fatal(err)
	}
	code, printed, _ := drillSystem(t, paySystem(shop.URL, provider.URL, payAddr, "toxiproxy: "+e.APIAddr()+"\n"), lostChargesDrill)
	if code != exitUsage || !strings.Contains(printed, "drill.yaml:10: faults[0].toxic.type: lost_reply needs a relay behind proxy pay") {
		t.Errorf("a proxy without a relay: exit %d:\n%s", code, printed)
	}

	// A stock Toxiproxy: the proxy exists, the capabilities route does not.
	stock := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/proxies" {
			fmt.Fprintf(w, `{"pay":{"name":"pay","listen":%q,"upstream":%q,"enabled":true,"toxics":[]}}`, payAddr, strings.TrimPrefix(provider.URL, "http://"))
			return
		}
		http.NotFound(w, r)
	}))
	defer stock.Close()
	code, printed, _ = drillSystem(t, paySystem(shop.URL, provider.URL, payAddr, "toxiproxy: "+stock.URL+"\n"), lostChargesDrill)
	if code != exitUsage || !strings.Contains(printed, "drill.yaml:10: faults[0].toxic.type: lost_reply is served by gameday's Toxiproxy only") {
		t.Errorf("a stock Toxiproxy: exit %d:\n%s", code, printed)
	}
	if n := charges.Load(); n != 0 {
		t.Errorf("a refused drill made %d charges", n)
	}
}

// An HTTP toxic whose path names requests the system never sends acts on
// nothing: the drill proved nothing of it, and a run that held otherwise is
// inconclusive (exit 3), its reason naming the fault; run.json keeps what
// it saw. One that does act is judged as usual.
func TestAnHTTPToxicThatActsOnNothingProvesNothing(t *testing.T) {
	shop, provider, _, payAddr := payingShop(t)
	drill := strings.Replace(lostChargesDrill, `toxic: {type: lost_reply, attributes: {match: "^POST /charge ", first: 2}}`,
		`toxic: {type: http_error, attributes: {path: "^/v1/charges", status: 503}}`, 1)
	code, printed, _ := drillSystem(t, paySystem(shop.URL, provider.URL, payAddr, ""), drill)
	if code != exitInconclusive || !strings.Contains(printed, "a fault acted on no request, or what it did is not known, so the drill proved nothing of it: charges-lost on pay acted on 0 of 0 matching requests") {
		t.Errorf("exit %d, want 3 naming the idle fault:\n%s", code, printed)
	}
	drill = strings.Replace(drill, `path: "^/v1/charges"`, `path: "^/charge$", every: 2`, 1)
	code, printed, _ = drillSystem(t, paySystem(shop.URL, provider.URL, payAddr, ""), drill)
	if code == exitInconclusive || code == exitUsage || !strings.Contains(printed, "fault: charges-lost (pay http_error) acted on ") || !strings.Contains(printed, "(first: POST /charge HTTP/1.1") {
		t.Errorf("exit %d, want the fault that acted judged:\n%s", code, printed)
	}
}

// A gameday Toxiproxy older than the HTTP toxics serves lost_reply but not
// http_error: a drill naming it is refused before anything is sent,
// saying which types it does serve.
func TestHTTPToxicRefusedByAToxiproxyWithoutIt(t *testing.T) {
	shop, provider, charges, payAddr := payingShop(t)
	older := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/proxies":
			fmt.Fprintf(w, `{"pay":{"name":"pay","listen":%q,"upstream":%q,"enabled":true,"toxics":[],"request_aware":true}}`, payAddr, strings.TrimPrefix(provider.URL, "http://"))
		case toxi.CapabilitiesPath:
			fmt.Fprint(w, `{"toxics":["latency","lost_reply"],"request_aware":["lost_reply"],"relayed":["pay"]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer older.Close()
	drill := strings.Replace(lostChargesDrill, `toxic: {type: lost_reply, attributes: {match: "^POST /charge ", first: 2}}`,
		`toxic: {type: http_error, attributes: {status: 429}}`, 1)
	code, printed, _ := drillSystem(t, paySystem(shop.URL, provider.URL, payAddr, "toxiproxy: "+older.URL+"\n"), drill)
	if code != exitUsage || !strings.Contains(printed, "drill.yaml:10: faults[0].toxic.type: the Toxiproxy at") || !strings.Contains(printed, "does not serve http_error (it serves lost_reply)") {
		t.Errorf("exit %d:\n%s", code, printed)
	}
	if n := charges.Load(); n != 0 {
		t.Errorf("a refused drill made %d charges", n)
	}
}
