package drive

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/internal/adminapi"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/scenarios"
)

// The runner's admin, breaker-probe (admin protocol, gauge, PromQL) and
// metric-sampler clients, pointed at an address that answers a 307 to
// another host: none follows it. The other host, which answers each of
// them well, gets no request and no admin token, and each read fails
// naming the 307, with no secret of where it pointed (the PromQL client
// quoted the redirect's body, Location and all). They followed it, and read the other host's breakers
// and metrics as the system's.
func TestRunnerClientsFollowNoRedirect(t *testing.T) {
	var reached atomic.Int64
	var token atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		token.Store(r.Header.Get("Authorization"))
		switch r.URL.Path {
		case "/admin/breakers":
			w.Write([]byte(`{"breakers":{"payment":{"state":"closed"}}}`))
		case "/metrics":
			w.Write([]byte("# TYPE gameday_breaker_state gauge\ngameday_breaker_state{dependency=\"payment\"} 0\n"))
		case "/api/v1/query":
			w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"dependency":"payment"},"value":[0,"0"]}]}}`))
		}
	}))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path+"?sig=s3cret", http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()

	sys := &system.System{Admin: "admin", Stores: map[string]*system.Store{
		"admin": {HTTP: redirect.URL, Headers: map[string]string{"Authorization": "Bearer admin-token"}},
	}}
	admin := adminapi.New(sys)
	var ans breakersAnswer
	check := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "307") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v, want the 307 as an error, where it pointed redacted", what, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	check("admin", admin.Call(ctx, http.MethodGet, "/admin/breakers", &ans))

	probe := newBreakerProbe(admin, time.Second, time.Now())
	_, err := probe.fetch()
	check("breaker probe, admin protocol", err)
	probe.metric = &scenarios.BreakerMetric{URL: redirect.URL + "/metrics"}
	_, err = probe.fetchMetric()
	check("breaker probe, gauge", err)
	probe.metric = nil
	probe.promql = &promqlSource{server: redirect.URL, q: &system.PromQL{Query: "breaker_state", Label: "dependency"}}
	_, err = probe.fetchMetric()
	check("breaker probe, PromQL", err)

	_, err = newMetricSampler(redirect.URL, time.Now()).one(context.Background(), "breaker_state", new(time.Duration))
	check("metric sampler", err)

	if n := reached.Load(); n != 0 {
		t.Errorf("the other host was reached %d times (Authorization %q)", n, token.Load())
	}
}
