package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/internal/testenv"
)

// The health command answers for each kind of server it is asked about:
// an HTTP endpoint (2xx or not), a TCP port (open or closed), and a real
// redis-server (PONG, or something that is not Redis).
func TestHealthCommand(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ok.Close()
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer sick.Close()
	closed := testenv.ClosedAddr(t) // a port nobody listens on, or can
	redis := testenv.Redis(t)
	cases := []struct {
		url  string
		code int
		want string // in the output
	}{
		{ok.URL + "/healthz", exitOK, "200 OK"},                                  // healthy HTTP
		{sick.URL + "/healthz", exitFailed, "503"},                               // answers, not 2xx
		{"tcp://" + redis.Addr(), exitOK, "connected"},                           // an open port
		{"tcp://" + closed, exitFailed, "refused"},                               // a closed one
		{"redis://" + redis.Addr(), exitOK, "PONG"},                              // a real Redis
		{"redis://" + strings.TrimPrefix(ok.URL, "http://"), exitFailed, "PING"}, // not Redis
		{"ftp://x", exitUsage, "want an http, https, tcp or redis URL"},          // unknown scheme
	}
	for _, c := range cases {
		t.Run(c.url, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run([]string{"health", "-timeout", "2s", c.url}, &out, &errOut)
			if code != c.code || !strings.Contains(out.String()+errOut.String(), c.want) {
				t.Errorf("exit %d, want %d; output %q %q, want %q", code, c.code, out.String(), errOut.String(), c.want)
			}
		})
	}
}
