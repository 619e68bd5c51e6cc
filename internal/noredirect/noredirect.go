// Package noredirect is gameday's one policy on HTTP redirects: none is
// followed, by any client of the runner or the reference checkout. A
// redirect followed re-sends the request — its body, and headers such as
// an X-Api-Key or an admin token — to wherever the answer points, and the
// other host's answer is then judged as the system's. The 3xx is the
// answer: the purchase flow matches it with its rules like any other (an
// unmatched one is an error with its sample), and every other client
// reports it as an error naming the status and, redacted, where it
// pointed.
package noredirect

import (
	"fmt"
	"net/http"
	"time"

	"github.com/gameday-dev/gameday/internal/redact"
)

// Check is an http.Client's CheckRedirect that follows nothing: the client
// returns the 3xx answer itself.
func Check(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Client is an http.Client with the given timeout (0: none) that follows
// no redirect.
func Client(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, CheckRedirect: Check}
}

// Refuse returns a copy of c that follows no redirect, for a function
// handed a client it did not make (nil: a client of no timeout). c itself
// is unchanged: it may be http.DefaultClient.
func Refuse(c *http.Client) *http.Client {
	if c == nil {
		return Client(0)
	}
	cp := *c
	cp.CheckRedirect = Check
	return &cp
}

// Is reports whether resp is a redirect: a 3xx with a Location.
func Is(resp *http.Response) bool {
	return resp.StatusCode/100 == 3 && resp.Header.Get("Location") != ""
}

// Error says that resp was a redirect gameday did not follow.
func Error(resp *http.Response) error {
	return fmt.Errorf("answered %s, a redirect (to %s), which gameday does not follow", resp.Status, redact.URL(resp.Header.Get("Location")))
}
