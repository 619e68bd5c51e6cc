package routetable

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gameday-dev/gameday/internal/noredirect"
	"github.com/gameday-dev/gameday/internal/redact"
	"github.com/gameday-dev/gameday/internal/wait"
)

// RoutesPath is where a router shows the table it routes by.
const RoutesPath = "/router/routes"

// WaitServed asks the router at routerURL for the table it routes by
// (GET RoutesPath, with hc) every 20ms until ok says it is the one wanted,
// or ctx ends; the error then says what the router last showed. No
// redirect is followed, whatever hc's policy (package noredirect): a 3xx is
// the router's answer, and not the table.
func WaitServed(ctx context.Context, hc *http.Client, routerURL string, ok func(*Table) bool) error {
	hc = noredirect.Refuse(hc)
	var last error
	for {
		t, err := served(ctx, hc, routerURL)
		switch {
		case err != nil:
			last = wait.Last(ctx, last, err)
		case ok(t):
			return nil
		default:
			last = fmt.Errorf("the router routes by version %d", t.Version)
		}
		if !wait.For(ctx, 20*time.Millisecond) {
			return fmt.Errorf("the router at %s did not take the table: %v", redact.URL(routerURL), last)
		}
	}
}

func served(ctx context.Context, hc *http.Client, routerURL string) (*Table, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, routerURL+RoutesPath, nil)
	if err != nil {
		return nil, redact.Error(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, redact.Error(err)
	}
	defer resp.Body.Close()
	if noredirect.Is(resp) {
		return nil, fmt.Errorf("GET %s: %w", RoutesPath, noredirect.Error(resp))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", RoutesPath, resp.Status)
	}
	var t Table
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&t); err != nil {
		return nil, fmt.Errorf("GET %s: %w", RoutesPath, err)
	}
	return &t, nil
}
