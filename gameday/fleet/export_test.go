package fleet

import (
	"context"
	"net/http"
	"time"
)

// AuthHeader opens a session with the coordinator at base as a worker
// that knows token does (hello), and returns the Authorization header of
// that worker's requests: for tests that speak the protocol by hand.
func AuthHeader(base, token string) (string, error) {
	w := &worker{o: WorkerOptions{Token: token, Wait: 5 * time.Second}, hc: http.DefaultClient, base: base}
	if err := w.hello(context.Background()); err != nil {
		return "", err
	}
	return w.session.header(), nil
}

// ListenOnClock is Listen with a coordinator whose clock is now: for a
// test whose workers' clocks differ from it.
func ListenOnClock(addr string, job Job, token string, now func() time.Time) (*Coordinator, error) {
	return listen(addr, job, token, now)
}
