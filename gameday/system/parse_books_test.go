package system

import (
	"os"
	"strings"
	"testing"
)

// Books that keep counts only — the units the sale started with and the
// units sold, as a seckill service keeps "total" and "sold" — parse as the
// docs say: oversold needs initial (or available) and sold (or orders),
// and nothing asks for available where no invariant needs it. So do books
// of only the units held, or only the units sold.
func TestCountsOnlyBooksParse(t *testing.T) {
	// The counts-only books of docs/systems.md, as written there.
	doc, err := os.ReadFile("../../docs/systems.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "- **Counts only.**")
	_, block, ok2 := strings.Cut(section, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/systems.md has no yaml block under \"Counts only\"")
	}
	var books strings.Builder
	for _, line := range strings.Split(block, "\n") {
		books.WriteString(strings.TrimPrefix(line, "  ") + "\n")
	}
	sys, err := Parse("systems.md", []byte(`name: seckill
base_url: http://127.0.0.1:8080
sku: s
purchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}]}]}
stores: {stock: {redis: "127.0.0.1:6379"}}
`+books.String()), nil)
	if err != nil {
		t.Fatalf("the docs' counts-only books: %v\n%s", err, books.String())
	}
	if st := sys.Books.Stock; st == nil || st.Initial == nil || st.Sold == nil || st.Available != nil {
		t.Errorf("the docs' counts-only books: %+v", sys.Books.Stock)
	}

	for _, stock := range []string{
		"{initial: {store: kv, redis: [HGET, 'sale:{{.SKU}}', total]}, sold: {store: kv, redis: [HGET, 'sale:{{.SKU}}', sold]}}",
		"{initial: {store: kv, redis: [GET, total]}}",
		"{reserved: {store: kv, redis: [SCARD, holds]}}",
		"{sold: {store: kv, redis: [GET, sold]}}",
	} {
		src := `name: seckill
base_url: http://127.0.0.1:8080
sku: s
purchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}]}]}
stores: {kv: {redis: "127.0.0.1:6379"}}
books:
  stock: ` + stock + `
`
		sys, err := Parse("seckill.yaml", []byte(src), nil)
		if err != nil {
			t.Errorf("stock %s: %v", stock, err)
			continue
		}
		if sys.Books.Stock.Available != nil {
			t.Errorf("stock %s: an available appeared", stock)
		}
	}
}

// A URL that validation refuses is shown redacted: its userinfo and query
// values may be a token, and the error reaches terminals and CI logs.
func TestRefusedURLIsShownRedacted(t *testing.T) {
	const secret = "sk_live_51HqSecret"
	src := `name: shop
base_url: http://127.0.0.1:8080
sku: s
purchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}]}]}
stores: {api: {http: "ftp://shop:` + secret + `@psp.example/v1?api_key=` + secret + `"}}
`
	_, err := Parse("shop.yaml", []byte(src), nil)
	if err == nil || !strings.Contains(err.Error(), `shop.yaml:5: stores.api.http: "ftp://xxxxx@psp.example/v1?api_key=xxxxx": want an http(s) URL`) || strings.Contains(err.Error(), secret) {
		t.Errorf("%v", err)
	}
}
