package system_test

import (
	"os"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday/system"
)

// What a load worker is sent of a system: the purchase flow and the values
// it uses, nothing else — not the books' DSN, not the admin token — and
// the worker reads it back from that alone, never from its own
// environment; the flow it builds is the coordinator's.
func TestFlowSourceCarriesOnlyTheFlow(t *testing.T) {
	const dsn, token, key = "postgres://shop:pg-s3cret@db/shop", "admin-t0ken", "checkout-api-key"
	t.Setenv("SHOP_PG", dsn)
	t.Setenv("SHOP_ADMIN_TOKEN", token)
	t.Setenv("SHOP_KEY", key)
	src := `name: shop
base_url: ${SHOP_URL:-http://127.0.0.1:18095}
sku: tee
# The purchase: one call.
purchase:
  steps:
    - url: /buy
      headers: {X-Api-Key: "${SHOP_KEY}"}
      answers: [{status: 201, outcome: confirmed}]
admin: http://127.0.0.1:18095/admin
stores:
  db: {postgres: "${SHOP_PG}", headers: {}}
books:
  stock: {available: {store: db, sql: "select available from stock"}}
`
	src = strings.Replace(src, `, headers: {}`, "", 1)
	sys, err := system.Parse("shop.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if whole := sys.Source(); whole.Vars["SHOP_PG"] != dsn {
		t.Fatalf("the whole source's vars %v: the test is wrong", whole.Vars)
	}
	fs, err := sys.FlowSource()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{dsn, "pg-s3cret", token, "SHOP_PG", "stores:", "books:", "admin:"} {
		if strings.Contains(string(fs.Data), secret) || fs.Vars[secret] != "" {
			t.Errorf("the flow's source holds %q:\n%s\nvars %v", secret, fs.Data, fs.Vars)
		}
	}
	if fs.Vars["SHOP_KEY"] != key || len(fs.Vars) != 2 {
		t.Errorf("vars %v: want SHOP_KEY and SHOP_URL's default only", fs.Vars)
	}
	if got, want := strings.Count(string(fs.Data), "\n"), strings.Count(src, "\n"); got != want {
		t.Errorf("%d lines, want the file's %d (lines are blanked, not removed)", got, want)
	}
	// A worker whose environment holds other values reads the job's.
	t.Setenv("SHOP_KEY", "the-workers-own")
	t.Setenv("SHOP_URL", "http://elsewhere.invalid")
	back, err := system.ParseSource(fs)
	if err != nil {
		t.Fatalf("parse the flow's source: %v\n%s", err, fs.Data)
	}
	if back.BaseURL != sys.BaseURL || back.Purchase.Steps[0].Headers["X-Api-Key"] != key {
		t.Errorf("the worker's flow: base %s, key %q", back.BaseURL, back.Purchase.Steps[0].Headers["X-Api-Key"])
	}
	// A ${NAME} the job does not give is not read from the environment.
	fs.Vars = map[string]string{}
	if _, err := system.ParseSource(fs); err == nil || !strings.Contains(err.Error(), "${SHOP_KEY} is not set") {
		t.Errorf("a value missing from the job: %v", err)
	}
}

// Every system file the project ships cuts down to a flow that parses.
func TestShippedSystemsHaveAFlowSource(t *testing.T) {
	for _, f := range []string{"../../examples/pyshop/gameday.yaml", "../../examples/ticketshop/gameday.yaml", "testdata/tiny.yaml"} {
		sys, err := system.LoadFile(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := sys.FlowSource()
		if err != nil {
			t.Fatal(err)
		}
		back, err := system.ParseSource(fs)
		if err != nil {
			b, _ := os.ReadFile(f)
			t.Fatalf("%s: %v\n%s", f, err, b)
		}
		if back.BaseURL != sys.BaseURL || len(back.Purchase.Steps) != len(sys.Purchase.Steps) {
			t.Errorf("%s: the flow differs", f)
		}
	}
	ref, err := system.Reference(map[string]string{"CHECKOUT_URL": "http://127.0.0.1:1", "PAYMENT_URL": "http://127.0.0.1:2", "TOXIPROXY": "127.0.0.1:3", "GAMEDAY_ADMIN_TOKEN": "tok"})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := ref.FlowSource()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fs.Vars["GAMEDAY_ADMIN_TOKEN"]; ok || strings.Contains(string(fs.Data), "tok\n") {
		t.Errorf("the reference's flow carries its admin token: %v", fs.Vars)
	}
	if _, err := system.ParseSource(fs); err != nil {
		t.Errorf("the reference's flow: %v", err)
	}
}
