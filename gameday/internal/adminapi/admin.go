// Package adminapi speaks gameday's admin protocol to a system that serves
// it (system.System.AdminEndpoint): the breakers, the waiting room's
// counters. Every stage that asks the checkout something goes through it:
// arming resets the high-water mark, the drive's probe reads the breakers,
// the record reads the mark.
package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/noredirect"
	"github.com/gameday-dev/gameday/internal/redact"
)

// API is a system's endpoint of gameday's admin protocol
// (system.System.AdminEndpoint): its base URL and the headers (a token)
// every request carries. The zero value is a system without one.
type API struct {
	base   string
	header http.Header
	hc     *http.Client
}

// New is sys's admin endpoint; without one, its zero value.
func New(sys *system.System) API {
	base, h := sys.AdminEndpoint()
	return API{base: base, header: h, hc: noredirect.Client(10 * time.Second)}
}

// OK reports whether the system speaks the admin protocol.
func (a API) OK() bool { return a.base != "" }

// Call sends method path with the admin headers and, when v is not nil,
// decodes the JSON answer into it. Any answer but 2xx is an error naming
// its status.
func (a API) Call(ctx context.Context, method, path string, v any) error {
	if !a.OK() {
		return fmt.Errorf("%s %s: the system speaks no admin protocol", method, path)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, nil)
	if err != nil {
		return err
	}
	req.Header = a.header.Clone()
	resp, err := a.hc.Do(req)
	if err != nil {
		return redact.Error(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		if noredirect.Is(resp) {
			return fmt.Errorf("%s %s: %w", method, redact.URL(a.base+path), noredirect.Error(resp))
		}
		return fmt.Errorf("%s %s: %s", method, redact.URL(a.base+path), resp.Status)
	}
	if v == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(v)
}

// AdmissionStats reads the waiting-room counters of a system that speaks
// gameday's admin protocol.
func AdmissionStats(ctx context.Context, admin API) (struct {
	MaxInProgress int `json:"max_in_progress"`
}, error) {
	var st struct {
		MaxInProgress int `json:"max_in_progress"`
	}
	err := admin.Call(ctx, http.MethodGet, "/admin/admission", &st)
	return st, err
}

// ResetAdmissionMax starts the checkout's high-water mark of checkouts in
// progress afresh, so that it measures this drill.
func ResetAdmissionMax(ctx context.Context, admin API) error {
	if err := admin.Call(ctx, http.MethodPost, "/admin/admission/reset-max", nil); err != nil {
		return fmt.Errorf("reset the checkouts-in-progress high-water mark: %w", err)
	}
	return nil
}

// WithClient is a sending its requests through hc (a probe's shorter
// timeout).
func (a API) WithClient(hc *http.Client) API {
	a.hc = hc
	return a
}
