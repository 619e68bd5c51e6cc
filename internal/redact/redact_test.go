package redact

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

const secret = "sk_live_51Hq"

func TestURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// A query's values go, its names stay.
		{"https://shop.example/stock?api_key=" + secret + "&sku=tee", "https://shop.example/stock?api_key=xxxxx&sku=xxxxx"},
		// Userinfo goes whole: a user name can be a token too.
		{"redis://" + secret + ":" + secret + "@127.0.0.1:6379/0", "redis://xxxxx@127.0.0.1:6379/0"},
		{"postgres://shop:" + secret + "@db:5432/shop?sslmode=disable", "postgres://xxxxx@db:5432/shop?sslmode=xxxxx"},
		// A bare query word may be a token.
		{"http://h/x?" + secret, "http://h/x?xxxxx"},
		// The fragment goes.
		{"http://h/x#access_token=" + secret, "http://h/x"},
		// Nothing to hide: as it was.
		{"http://127.0.0.1:8080/admin/ledger", "http://127.0.0.1:8080/admin/ledger"},
		// Does not parse: not shown at all.
		{"http://h/%zz" + secret, "<a URL that does not parse>"},
	} {
		if got := URL(c.in); got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDSN(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"host=127.0.0.1 port=5432 user=shop password=" + secret + " dbname=shop", "host=127.0.0.1 port=5432 user=shop password=xxxxx dbname=shop"},
		{"host=db password='" + secret + " x' dbname=shop", "host=db password=xxxxx dbname=shop"},
		{"shop:" + secret + "@tcp(127.0.0.1:3306)/shop", "shop:xxxxx@tcp(127.0.0.1:3306)/shop"},
		{"mysql://shop:" + secret + "@127.0.0.1:3306/shop", "mysql://xxxxx@127.0.0.1:3306/shop"},
	} {
		if got := DSN(c.in); got != c.want || strings.Contains(got, secret) {
			t.Errorf("DSN(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCommand(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"systemctl", "kill", "--signal=STOP", "shop.service"}, "systemctl kill --signal=STOP shop.service"},
		{[]string{"shopctl", "--token", secret, "pause"}, "shopctl --token xxxxx pause"},
		{[]string{"shopctl", "--api-key=" + secret, "pause"}, "shopctl --api-key=xxxxx pause"},
		{[]string{"env", "PGPASSWORD=" + secret, "psql", "-c", "select 1"}, "env PGPASSWORD=xxxxx psql -c select 1"},
		{[]string{"curl", "https://h/pause?key=" + secret}, "curl https://h/pause?key=xxxxx"},
		{[]string{"shopctl", "--url=https://u:" + secret + "@h/x"}, "shopctl --url=https://xxxxx@h/x"},
		{[]string{"psql", "host=db password=" + secret}, "psql host=db password=xxxxx"},
	} {
		if got := Command(c.in); got != c.want || strings.Contains(got, secret) {
			t.Errorf("Command(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestHeader(t *testing.T) {
	if got := Header("X-Api-Key", secret); got != "X-Api-Key: xxxxx" {
		t.Errorf("Header = %q", got)
	}
}

// A net/http error quotes the URL it was asked for, query and all.
func TestError(t *testing.T) {
	// No network: a scheme net/http does not speak fails at once, with
	// the same *url.Error a refused connection gives.
	_, err := http.Get("gopher://127.0.0.1/stock?api_key=" + secret)
	if err == nil || !strings.Contains(err.Error(), secret) {
		t.Fatalf("want net/http's error to quote the URL, got %v", err)
	}
	r := Error(err)
	if strings.Contains(r.Error(), secret) || !strings.Contains(r.Error(), "api_key=xxxxx") {
		t.Errorf("Error: %v", r)
	}
	var ue *url.Error
	if !errors.As(r, &ue) {
		t.Error("the redacted error lost its *url.Error")
	}
	if Error(nil) != nil {
		t.Error("Error(nil) is not nil")
	}
	plain := errors.New("no URL here")
	if Error(plain) != plain {
		t.Error("an error without a URL changed")
	}
}
