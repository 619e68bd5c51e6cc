package gameday

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

// adminAPI is a system's endpoint of gameday's admin protocol
// (system.System.AdminEndpoint): its base URL and the headers (a token)
// every request carries. The zero value is a system without one.
type adminAPI struct {
	base   string
	header http.Header
	hc     *http.Client
}

func newAdminAPI(sys *system.System) adminAPI {
	base, h := sys.AdminEndpoint()
	return adminAPI{base: base, header: h, hc: noredirect.Client(10 * time.Second)}
}

// ok reports whether the system speaks the admin protocol.
func (a adminAPI) ok() bool { return a.base != "" }

// call sends method path with the admin headers and, when v is not nil,
// decodes the JSON answer into it. Any answer but 2xx is an error naming
// its status.
func (a adminAPI) call(ctx context.Context, method, path string, v any) error {
	if !a.ok() {
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
