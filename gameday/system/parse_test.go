package system

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/internal/fileerr"
)

func tiny(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Each case changes testdata/tiny.yaml in one place and names the line,
// field and message the error must carry. Nothing is contacted.
func TestBadSystemFiles(t *testing.T) {
	cases := []struct {
		name     string
		old, new string // replace old by new in tiny.yaml
		line     int
		field    string
		msg      string
	}{
		// A misspelt key is an error, not silently ignored.
		{"unknown key", "sku: sku-1", "skew: sku-1", 3, "skew", "unknown field (known: admin, base_url,"},
		// Deeper down, with the path.
		{"unknown step key", "      body:", "      bodi:", 7, "purchase.steps[0].bodi", "unknown field"},
		// The outcome vocabulary is closed.
		{"unknown outcome", "outcome: confirmed}", "outcome: bought}", 9, "purchase.steps[0].answers[0].outcome", `"bought": a purchase's answer means one of confirmed, declined`},
		// A status that is no status.
		{"bad status", "{status: 201,", "{status: 2000,", 9, "purchase.steps[0].answers[0].status", "want a status from 100 to 599"},
		// Templates: a field that does not exist, with the ones that do.
		{"unknown template field", "{{json .CheckoutID}}", "{{json .CartID}}", 7, "purchase.steps[0].body", ".CartID: no such value (known: .Attempt, .CheckoutID,"},
		// Templates: no logic.
		{"template logic", "{{json .CheckoutID}}", "{{if .Session}}x{{end}}", 7, "purchase.steps[0].body", "only {{.Field}}"},
		// A kept value nobody keeps.
		{"kept unknown", "{{json .CheckoutID}}", "{{.Kept.token}}", 7, "purchase.steps[0].body", `no step so far keeps "token"`},
		// next in the last step goes nowhere.
		{"next at the end", "outcome: unavailable}", "outcome: next}", 10, "purchase.steps[0].answers[1].outcome", "this is the last step"},
		// A dependency needs listen and upstream when gameday runs Toxiproxy.
		{"no upstream", "    upstream: 127.0.0.1:5432\n", "", 12, "dependencies.db.upstream", "required: gameday starts its own Toxiproxy"},
		// A protocol is one gameday knows (what the HTTP toxics can read
		// depends on it).
		{"unknown protocol", "    upstream: 127.0.0.1:5432\n", "    upstream: 127.0.0.1:5432\n    protocol: postgresql\n", 15, "dependencies.db.protocol", `"postgresql": want one of http, https, redis, postgres, mysql, tcp (tcp: any other)`},
		// A cache fault's password and database are a Redis's.
		{"a password for postgres", "    upstream: 127.0.0.1:5432\n", "    upstream: 127.0.0.1:5432\n    protocol: postgres\n    password: secret\n", 16, "dependencies.db.password", "only for a dependency that speaks Redis"},
		{"a database for postgres", "    upstream: 127.0.0.1:5432\n", "    upstream: 127.0.0.1:5432\n    protocol: postgres\n    database: 2\n", 16, "dependencies.db.database", "only for a dependency that speaks Redis"},
		// A proxy cannot listen where its dependency is.
		{"listen is upstream", "listen: 127.0.0.1:15432", "listen: 127.0.0.1:5432", 13, "dependencies.db.listen", `"127.0.0.1:5432" is also its upstream`},
		// Each driver's placeholders.
		{"mysql with $1", "  kv: {redis: \"127.0.0.1:6379\"}\nbooks:\n",
			"  kv: {redis: \"127.0.0.1:6379\"}\n  my: {mysql: \"u@tcp(127.0.0.1:3306)/shop\"}\nbooks:\n  orders: {store: my, sql: \"SELECT cart AS checkout_id FROM orders WHERE sku = $1\", args: [\"{{.SKU}}\"]}\n",
			19, "books.orders.sql", `store "my" is MySQL, whose placeholders are ?, not $1`},
		{"postgres with ?", "  kv: {redis: \"127.0.0.1:6379\"}\nbooks:\n",
			"  kv: {redis: \"127.0.0.1:6379\"}\n  pg: {postgres: \"postgres://u@127.0.0.1/shop\"}\nbooks:\n  orders: {store: pg, sql: \"SELECT cart AS checkout_id FROM orders WHERE sku = ?\", args: [\"{{.SKU}}\"]}\n",
			19, "books.orders.sql", `store "pg" is PostgreSQL, whose placeholders are $1, $2, ..., not ?`},
		// Two proxies cannot take one address.
		{"listen twice", "stores:\n", "  cache:\n    listen: 127.0.0.1:15432\n    upstream: 127.0.0.1:6379\nstores:\n", 13, "dependencies.db.listen", `"127.0.0.1:15432" is also cache's listen address`},
		// A process alone has a process and nothing a proxy needs.
		{"process alone without a process", "stores:\n", "  worker: {proxy: none}\nstores:\n", 15, "dependencies.worker.proxy", "none is a process alone, which only process faults act on: give its process"},
		{"process alone with an address", "stores:\n", "  worker:\n    proxy: none\n    listen: 127.0.0.1:15999\n    process: {pid_file: worker.pid}\nstores:\n", 17, "dependencies.worker.listen", "a process alone (proxy: none) has no network address"},
		// A book query names a store that is not there.
		{"unknown store", "{store: kv, redis:", "{store: cache, redis:", 19, "books.stock.available.store", `"cache": no such store (stores: kv)`},
		// An SQL query on a Redis store.
		{"wrong kind", `redis: [GET, "stock:{{.SKU}}"]}`, `sql: "SELECT 1"}`, 19, "books.stock.available.sql", `store "kv" is redis, which cannot answer sql`},
		// A variable that is not set.
		{"unset variable", "http://127.0.0.1:9999", "${GAMEDAY_TEST_UNSET_URL}", 2, "base_url", "${GAMEDAY_TEST_UNSET_URL} is not set"},
		// Durations are strings with a unit.
		{"bare duration", "books:\n", "books:\n  settle_within: 5\n", 18, "books.settle_within", `5 is a bare number, not a duration (write "5s")`},
		// A setup action's retries are bounded.
		{"retry too long", "books:\n", "setup:\n  - {store: kv, redis: [SET, k, v], retry_within: 1h}\nbooks:\n", 18, "setup[0].retry_within", "1h0m0s: want a duration from 0 to 10m0s"},
		// settled and a fixed wait: which one?
		{"settled and settle_after", "books:\n", "books:\n  settled: {store: kv, redis: [SCARD, holds]}\n  settle_after: 5s\n", 19, "books.settle_after", "give one of settled, settle_after"},
		// A status with no words: no charge would count as approved.
		{"empty status words", "books:\n", "books:\n  charges: {store: kv, redis: [SMEMBERS, c], statuses: {approved: []}}\n", 18, "books.charges.statuses.approved", "empty: list the words"},
		// One word under two statuses.
		{"after with a unit", "        - {status: 5xx, outcome: unavailable}\n", "        - {status: 5xx, outcome: unavailable}\n      retry_after: [{after: 1s, unit: ms}]\n", 11, "purchase.steps[0].retry_after[0]", "unit: only for header and json"},
		{"after and a header", "        - {status: 5xx, outcome: unavailable}\n", "        - {status: 5xx, outcome: unavailable}\n      retry_after: [{header: Retry-After, after: 1s}]\n", 11, "purchase.steps[0].retry_after[0]", "want exactly one of header, json, after"},
		{"after kept", "        - {status: 5xx, outcome: unavailable}\n", "        - {status: 5xx, outcome: unavailable}\n      keep: {token: {after: 1s}}\n", 11, "purchase.steps[0].keep.token", "after: only for retry_after"},
		{"misnamed column", "books:\n", "books:\n  charges: {store: kv, redis: [SMEMBERS, c], fields: {checkout: ref, status: st}}\n", 18, "books.charges.fields.checkout", "no such column: the books read checkout_id, status, id, created_at, amount"},
		{"misnamed order column", "books:\n", "books:\n  orders: {store: kv, redis: [SMEMBERS, o], fields: {price: a}}\n", 18, "books.orders.fields.price", "no such column: the books read checkout_id, charge, units, amount"},
		// A price that is not a positive number, or that nothing can be
		// held to.
		{"price not a number", "books:\n", "books:\n  orders: {store: kv, redis: [SMEMBERS, o]}\n  charges: {store: kv, redis: [SMEMBERS, c], fields: {amount: a}}\n  price: 12.99 EUR\n", 20, "books.price", `want a positive number in the unit of the books' amounts (1299, or 12.99), got "12.99 EUR"`},
		{"price without charge amounts", "books:\n", "books:\n  orders: {store: kv, redis: [SMEMBERS, o]}\n  charges: {store: kv, redis: [SMEMBERS, c]}\n  price: 1299\n", 20, "books.price", "nothing to hold to it: books.charges gives no amount"},
		{"status word twice", "books:\n", "books:\n  charges: {store: kv, redis: [SMEMBERS, c], statuses: {approved: [ok], voided: [ok]}}\n", 18, "books.charges.statuses.voided", `"ok" is also under approved`},
		// null would match nothing, silently.
		{"json null", "{status: 201, outcome: confirmed}", "{status: 201, json: {error: null}, outcome: confirmed}", 9, "purchase.steps[0].answers[0]", "json.error: want a string, a number or a boolean"},
		// The stock is not a shopper's value.
		{"stock in a step", "{{json .CheckoutID}}", "{{.Stock}}", 7, "purchase.steps[0].body", ".Stock: setup and books only"},
		// Headers go with http stores only, and are headers.
		{"headers on redis", `  kv: {redis: "127.0.0.1:6379"}`, `  kv: {redis: "127.0.0.1:6379", headers: {X-Token: t}}`, 16, "stores.kv.headers", "for an http store only"},
		{"bad header name", `  kv: {redis: "127.0.0.1:6379"}`, "  kv: {redis: \"127.0.0.1:6379\"}\n  api: {http: \"http://127.0.0.1:9\", headers: {\"X Token\": t}}", 17, "stores.api.headers.X Token", "not a header name"},
		// admin is a URL or an http store's name.
		{"admin names no store", "books:\n", "admin: checkout\nbooks:\n", 17, "admin", `"checkout": want an http(s) URL, or the name of an http store (stores: kv)`},
		{"admin names a redis store", "books:\n", "admin: kv\nbooks:\n", 17, "admin", `"kv": store kv is not an http store`},
		// A step no answer leaves: the steps after it never run.
		// Journeys: their answers do not buy, a purchase's do not say ok,
		// think is a journey's pause before a later step.
		{"journey that buys", "dependencies:\n", "journeys:\n  browse:\n    steps:\n      - url: /p\n        answers: [{status: 200, outcome: confirmed}]\ndependencies:\n", 15, "journeys.browse.steps[0].answers[0].outcome", `"confirmed": a journey does not buy: its answers mean one of ok, unavailable`},
		{"purchase that says ok", "{status: 201, outcome: confirmed}", "{status: 201, outcome: ok}", 9, "purchase.steps[0].answers[0].outcome", `"ok": a purchase's answer means one of confirmed`},
		{"think in the purchase", "      body:", "      think: 1s\n      body:", 7, "purchase.steps[0].think", "think is for a journey's"},
		{"think before the first page", "dependencies:\n", "journeys:\n  browse:\n    steps:\n      - url: /p\n        think: 1s\n        answers: [{status: 200, outcome: ok}]\ndependencies:\n", 15, "journeys.browse.steps[0].think", "the first step is sent on arrival"},
		{"journey named purchase", "dependencies:\n", "journeys:\n  purchase:\n    steps:\n      - {url: /p, answers: [{status: 200, outcome: ok}]}\ndependencies:\n", 12, "journeys.purchase", "the purchase is the purchase section's"},
		{"buy above one", "dependencies:\n", "journeys:\n  cart:\n    buy: 20\n    steps:\n      - {url: /p, answers: [{status: 200, outcome: ok}]}\ndependencies:\n", 13, "journeys.cart.buy", "20: the share of the journey's visitors who buy, between 0 and 1"},
		{"journey ends on next", "dependencies:\n", "journeys:\n  browse:\n    steps:\n      - {url: /p, answers: [{status: 200, outcome: next}]}\ndependencies:\n", 14, "journeys.browse.steps[0].answers[0].outcome", "the journey's last step"},
		{"unreachable step", "        - {status: 5xx, outcome: unavailable}\n", "        - {status: 5xx, outcome: unavailable}\n    - url: /pay\n      answers: [{status: 200, outcome: confirmed}]\n", 8, "purchase.steps[0].answers", "no answer goes on to the next step"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := tiny(t)
			if !strings.Contains(src, c.old) {
				t.Fatalf("tiny.yaml has no %q", c.old)
			}
			_, err := Parse("tiny.yaml", []byte(strings.Replace(src, c.old, c.new, 1)), nil)
			if err == nil {
				t.Fatal("no error")
			}
			for _, e := range fileerr.All(err) {
				if e.Line == c.line && e.Field == c.field && strings.Contains(e.Msg, c.msg) && e.File == "tiny.yaml" {
					return
				}
			}
			t.Errorf("got %v\nwant line %d, field %s, message with %q", err, c.line, c.field, c.msg)
		})
	}
}

func TestTinyParses(t *testing.T) {
	s, err := Parse("tiny.yaml", []byte(tiny(t)), nil)
	if err != nil {
		t.Fatal(err)
	}
	st := s.Purchase.Steps[0]
	if st.Name != "step-1" || st.Method != "POST" || s.Dependencies["db"].Proxy != "db" || len(st.RetryAfter) != 1 {
		t.Errorf("defaults: %+v, dependency %+v", st, s.Dependencies["db"])
	}
	if s.Books.SettleWithin.D() != DefaultSettleWithin || s.Books.Stock.Available.Timeout.D() != DefaultQueryTimeout {
		t.Errorf("books defaults: %+v", s.Books)
	}
}

// ${NAME} in a plain scalar is read for what it becomes: a number where a
// number is wanted; quoted, it stays a string.
func TestVariablesBecomeNumbers(t *testing.T) {
	src := `
name: shop
base_url: http://127.0.0.1:9
sku: ${SKU}
purchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}]}]}
stores: {api: {http: "http://127.0.0.1:9"}}
setup:
  - store: api
    http: {path: /reset}
    expect: ${CODE}
`
	s, err := Parse("shop.yaml", []byte(src), map[string]string{"CODE": "204", "SKU": "'007'"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Setup[0].Expect != 204 || s.SKU != "'007'" {
		t.Errorf("expect %d, sku %q", s.Setup[0].Expect, s.SKU)
	}
	// Quoted (as a flow mapping needs), still a number.
	s, err = Parse("shop.yaml", []byte(strings.Replace(src, "expect: ${CODE}", `expect: "${CODE}"`, 1)), map[string]string{"CODE": "204", "SKU": "x"})
	if err != nil || s.Setup[0].Expect != 204 {
		t.Errorf("quoted: %v, %v", s, err)
	}
	// A number where a string is wanted is its text, plain or quoted.
	for _, sku := range []string{"sku: ${SKU}", `sku: "${SKU}"`} {
		s, err = Parse("shop.yaml", []byte(strings.Replace(src, "sku: ${SKU}", sku, 1)), map[string]string{"CODE": "204", "SKU": "123"})
		if err != nil || s.SKU != "123" {
			t.Errorf("%s: sku %v, %v", sku, s, err)
		}
	}
	// Text where a number is wanted is still refused, at its line.
	if _, err := Parse("shop.yaml", []byte(src), map[string]string{"CODE": "no-content", "SKU": "x"}); err == nil || !strings.Contains(err.Error(), "shop.yaml:10: setup[0].expect") {
		t.Errorf("CODE=no-content: %v", err)
	}
}

// An http store's headers go with every request to it, the query's own
// headers win, and admin may name the store to use its URL and headers.
func TestStoreHeadersAndAdminStore(t *testing.T) {
	src := `
name: shop
base_url: http://127.0.0.1:9
sku: sku-1
purchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}]}]}
stores:
  api:
    http: "http://127.0.0.1:9/base/"
    headers: {Authorization: "Bearer ${TOKEN}", X-Tenant: acme, X-Empty: "${NONE:-}"}
setup:
  - {store: api, http: {method: PUT, path: /reset, headers: {X-Tenant: other}}}
admin: api
`
	s, err := Parse("shop.yaml", []byte(src), map[string]string{"TOKEN": "tok-1"})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Render(&s.Setup[0].Query, Values{SKU: "sku-1"})
	if r.URL != "http://127.0.0.1:9/base/reset" || r.Headers.Get("Authorization") != "Bearer tok-1" || r.Headers.Get("X-Tenant") != "other" {
		t.Errorf("rendered %s %v", r.URL, r.Headers)
	}
	if _, ok := r.Headers["X-Empty"]; ok {
		t.Errorf("an empty header was sent: %v", r.Headers)
	}
	base, h := s.AdminEndpoint()
	if base != "http://127.0.0.1:9/base" || h.Get("Authorization") != "Bearer tok-1" {
		t.Errorf("admin endpoint %q %v", base, h)
	}
	// A query that names a whole URL does not take the store's token there.
	s, err = Parse("shop.yaml", []byte(strings.Replace(src, "path: /reset", "path: http://elsewhere.invalid/reset", 1)), map[string]string{"TOKEN": "tok-1"})
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Render(&s.Setup[0].Query, Values{SKU: "sku-1"}); r.URL != "http://elsewhere.invalid/reset" || r.Headers.Get("Authorization") != "" || r.Headers.Get("X-Tenant") != "other" {
		t.Errorf("a whole URL: %s %v, want its own headers only", r.URL, r.Headers)
	}
	// A URL is a URL, with no headers.
	s, err = Parse("shop.yaml", []byte(strings.Replace(src, "admin: api", "admin: http://127.0.0.1:7/", 1)), map[string]string{"TOKEN": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if base, h := s.AdminEndpoint(); base != "http://127.0.0.1:7" || len(h) != 0 {
		t.Errorf("admin URL: %q %v", base, h)
	}
}

// The reference checkout's description and the starter file are valid as
// shipped; the starter's examples are all there is to edit.
func TestShippedSystemsParse(t *testing.T) {
	ref, err := Reference(map[string]string{"CHECKOUT_URL": "http://127.0.0.1:8080", "PAYMENT_URL": "http://127.0.0.1:8081", "TOXIPROXY": "127.0.0.1:8474"})
	if err != nil {
		t.Fatal(err)
	}
	if ref.Books.Charges == nil || ref.Admin == "" || len(ref.Dependencies) != 3 {
		t.Errorf("reference: %+v", ref)
	}
	// The runner's token goes to every admin request: setup, the books
	// and the admin protocol.
	ref, err = Reference(map[string]string{"CHECKOUT_URL": "http://127.0.0.1:8080", "TOXIPROXY": "127.0.0.1:8474", "GAMEDAY_ADMIN_TOKEN": "tok"})
	if err != nil {
		t.Fatal(err)
	}
	if base, h := ref.AdminEndpoint(); base != "http://127.0.0.1:8080" || h.Get("Authorization") != "Bearer tok" {
		t.Errorf("reference admin: %q %v", base, h)
	}
	if r := ref.Render(&ref.Setup[0].Query, Values{SKU: "sku-1", Stock: 5}); r.Headers.Get("Authorization") != "Bearer tok" {
		t.Errorf("reference setup headers: %v", r.Headers)
	}
	noPay, err := Reference(map[string]string{"CHECKOUT_URL": "http://127.0.0.1:8080", "TOXIPROXY": "127.0.0.1:8474"})
	if err != nil || noPay.Books.Charges != nil {
		t.Errorf("reference without a provider: charges %+v, %v", noPay.Books.Charges, err)
	}
	if _, err := Parse("starter.yaml", Starter(), nil); err != nil {
		t.Errorf("starter: %v", err)
	}
	for _, f := range []string{"../../examples/pyshop/gameday.yaml", "../../examples/ticketshop/gameday.yaml"} {
		if _, err := LoadFile(f, nil); err != nil {
			t.Errorf("%s: %v", filepath.Base(filepath.Dir(f)), err)
		}
	}
}

// A file that cannot be read is not an *Error; one too large is.
func TestLoadFileErrors(t *testing.T) {
	if _, err := LoadFile(filepath.Join(t.TempDir(), "none.yaml"), nil); err == nil || errors.As(err, new(*Error)) {
		t.Errorf("missing file: %v", err)
	}
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, make([]byte, MaxSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	var fe *Error
	if _, err := LoadFile(big, nil); !errors.As(err, &fe) || !strings.Contains(fe.Msg, "larger than") {
		t.Errorf("big file: %v", err)
	}
}

// FuzzParse: no input crashes the parser, and what it accepts it accepts
// again.
func FuzzParse(f *testing.F) {
	src, err := os.ReadFile("testdata/tiny.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(src)
	f.Add(Starter())
	f.Add([]byte("name: [\n"))
	f.Add([]byte("a: &x 1\nb: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data, map[string]string{})
		if err != nil {
			if len(fileerr.All(err)) == 0 {
				t.Fatalf("error without a location: %v", err)
			}
			return
		}
		if s.Name == "" || len(s.Purchase.Steps) == 0 {
			t.Fatalf("accepted without a name or steps: %+v", s)
		}
	})
}
