package testenv

import (
	"net/http"
	"testing"
)

// CheckAdminToken asks for url (a checkout's admin path) without a token,
// with wrong ones and with token, and fails the test unless only token is
// let in: 401 for the others, 200 for it.
func CheckAdminToken(tb testing.TB, url, token string) {
	tb.Helper()
	for _, c := range []struct {
		auth string
		want int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong-" + token, http.StatusUnauthorized},
		{token, http.StatusUnauthorized}, // not a bearer credential
		{"Bearer " + token, http.StatusOK},
	} {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			tb.Fatal(err)
		}
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			tb.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			tb.Errorf("GET %s with Authorization %q: %d, want %d", url, c.auth, resp.StatusCode, c.want)
		}
	}
}
