package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gameday-dev/gameday/gameday/fleet"
)

// "gameday worker" pointed at something that is not its run's coordinator
// (a spoofed one, a wrong URL) says so and exits non-zero, having sent it
// nothing but its hello: never the token.
func TestWorkerRefusesACoordinatorWithoutTheToken(t *testing.T) {
	const token = "w0rker-token-for-a-test"
	var requests atomic.Int64
	var leaked atomic.Bool
	spoof := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if strings.Contains(r.Header.Get("Authorization")+r.URL.String(), token) {
			leaked.Store(true)
		}
		fmt.Fprintf(w, `{"nonce": %q, "proof": %q}`, strings.Repeat("01", 16), strings.Repeat("02", 32))
	}))
	defer spoof.Close()
	t.Setenv(fleet.TokenEnv, token)
	var stdout, stderr bytes.Buffer
	code := run([]string{"worker", "-coordinator", spoof.URL, "-shard", "0"}, &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "not this run's coordinator") {
		t.Errorf("exit %d, stderr %q: want a refusal", code, stderr.String())
	}
	if n := requests.Load(); n != 1 || leaked.Load() {
		t.Errorf("the spoofed coordinator got %d requests (token leaked: %v), want the hello alone", n, leaked.Load())
	}
}
