package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// The storefront: what shoppers do besides buying, for drills whose load
// browses and fills carts under a flash sale (docs/journeys.md). Both
// endpoints are cheap and never touch the books.
//
//   - GET /products/{sku}: the product page. It shows the units left,
//     read from the inventory Redis within the inventory timeout; when
//     that read fails the page is still served, its stock unknown and the
//     answer marked degraded: a shopper can still read about the product.
//     With a catalogue (Config.CatalogURL) it shows the product's
//     description, from a cache in front of the catalogue
//     (productcache.go); one that cannot be had at all is 503 (reason
//     catalog).
//   - POST /cart {"session","sku","qty"} adds to the session's cart, in
//     the sessions Redis; GET /cart with the Session header shows it (a
//     session token in a query string would land in access logs). A
//     cart holds at most 100 of a SKU. A cart needs the session store:
//     without it the answer is 503 (reason sessions) with a Retry-After,
//     and the shopper may come back. A cart lives as long as a session.

// productPage is the product page's answer.
type productPage struct {
	SKU        string `json:"sku"`
	PriceCents int64  `json:"price_cents"`
	// Available is the units left; nil when the stock could not be read.
	Available *int64 `json:"available"`
	// Name and Description come from the catalogue, through the product
	// cache (productcache.go); Stale says they are the last ones had,
	// served because the catalogue failed.
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Stale       bool   `json:"stale,omitempty"`
	Degraded    bool   `json:"degraded,omitempty"`
}

func (s *Server) handleProduct(w http.ResponseWriter, r *http.Request) {
	sku := r.PathValue("sku")
	if sku == "" || len(sku) > 200 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"status": "error", "reason": "sku"})
		return
	}
	page := productPage{SKU: sku, PriceCents: s.cfg.PriceCents}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Inventory.Timeout)
	defer cancel()
	n, err := s.invRedis.HGet(ctx, keys(sku)[0], "available").Int64()
	switch {
	case errors.Is(err, redis.Nil):
		writeJSON(w, http.StatusNotFound, map[string]string{"status": "not_found"})
		return
	case err != nil:
		page.Degraded = true
	default:
		page.Available = &n
	}
	if s.products != nil {
		p, stale, err := s.products.get(r.Context(), sku)
		if err != nil {
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": "catalog"})
			return
		}
		page.Name, page.Description, page.Stale = p.Name, p.Description, stale
		page.Degraded = page.Degraded || stale
	}
	writeJSON(w, http.StatusOK, page)
}

// cartKey is a session's cart: a hash of SKU to quantity.
func cartKey(session string) string { return "gameday:cart:" + session }

// maxCartQty is the most of one SKU a cart holds.
const maxCartQty = 100

type cartAdd struct {
	Session string `json:"session"`
	SKU     string `json:"sku"`
	Qty     int64  `json:"qty"`
}

func (s *Server) handleCartAdd(w http.ResponseWriter, r *http.Request) {
	var req cartAdd
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10)).Decode(&req); err != nil || req.Session == "" || req.SKU == "" ||
		len(req.Session) > 200 || len(req.SKU) > 200 || req.Qty < 0 || req.Qty > 100 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"status": "error", "reason": "want session, sku and a qty of 0 to 100"})
		return
	}
	if req.Qty == 0 {
		req.Qty = 1
	}
	if s.sessRedis == nil {
		s.cartUnavailable(w)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Sessions.Timeout)
	defer cancel()
	key := cartKey(req.Session)
	var qty *redis.IntCmd
	_, err := s.sessRedis.TxPipelined(ctx, func(p redis.Pipeliner) error {
		qty = p.HIncrBy(ctx, key, req.SKU, req.Qty)
		p.Expire(ctx, key, s.cfg.SessionTTL)
		return nil
	})
	if err != nil {
		s.cartUnavailable(w)
		return
	}
	if qty.Val() > maxCartQty {
		// Over the limit: the add is taken back, and refused.
		_ = s.sessRedis.HIncrBy(ctx, key, req.SKU, -req.Qty).Err()
		writeJSON(w, http.StatusConflict, map[string]any{"status": "limit", "reason": "at most 100 of a SKU in a cart"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "sku": req.SKU, "qty": qty.Val()})
}

func (s *Server) handleCartView(w http.ResponseWriter, r *http.Request) {
	session := r.Header.Get("Session")
	if session == "" || len(session) > 200 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"status": "error", "reason": "want the Session header"})
		return
	}
	if s.sessRedis == nil {
		s.cartUnavailable(w)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Sessions.Timeout)
	defer cancel()
	items, err := s.sessRedis.HGetAll(ctx, cartKey(session)).Result()
	if err != nil {
		s.cartUnavailable(w)
		return
	}
	cart := map[string]int64{}
	for sku, q := range items {
		if n, err := strconv.ParseInt(q, 10, 64); err == nil {
			cart[sku] = n
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "items": cart})
}

// cartUnavailable answers a cart request the session store could not
// serve: come back in a second.
func (s *Server) cartUnavailable(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": "sessions"})
}
