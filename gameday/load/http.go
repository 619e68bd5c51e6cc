package load

import (
	"net"
	"net/http"
	"time"
)

// NewClient returns an http.Client tuned for a load generator: keep-alives,
// no cap on idle connections per host (there are never more than shoppers
// in flight, which Plan.MaxShoppers bounds, so every shopper of the pool
// can keep its connection), small connection buffers (a checkout's
// requests and answers are well under 1 KiB, and each waiting shopper
// holds its connection's buffers: 3 KiB instead of net/http's default 8
// KiB), no compression, no client-wide timeout (each request's context
// carries the shopper's deadline), a 5 s dial timeout, and idle
// connections closed after 5 s (after a surge, each idle connection keeps
// two net/http goroutines that every garbage collection scans, which makes
// arrivals late).
func NewClient() *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         d.DialContext,
		MaxIdleConnsPerHost: PoolLimit,
		IdleConnTimeout:     5 * time.Second,
		TLSHandshakeTimeout: 5 * time.Second,
		DisableCompression:  true,
		WriteBufferSize:     1 << 10,
		ReadBufferSize:      2 << 10,
	}}
}
