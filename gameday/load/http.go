package load

import (
	"github.com/gameday-dev/gameday/internal/noredirect"
	"net"
	"net/http"
	"time"
)

// NewClient returns an http.Client tuned for a load generator. Plain http
// goes through the generator's own HTTP/1.1 transport (http1.go): each
// request written and answered on its shopper's goroutine, over a
// keep-alive connection with small buffers taken from pools only while
// a request is written or an answer read (a checkout's requests and
// answers are well under 1 KiB; a waiting shopper holds none), no
// goroutine per connection, no cap on idle
// connections per host (there are never more than shoppers in flight,
// which Plan.MaxShoppers bounds, so every shopper can keep its
// connection), idle connections closed after 5 s. https and proxied
// requests go through net/http's Transport with the same settings. No
// compression, no client-wide timeout (each request's context carries the
// shopper's deadline), a 5 s dial timeout.
func NewClient() *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	// No redirect is followed (package noredirect): the 3xx is the
	// checkout's answer, matched by the purchase's rules.
	return &http.Client{CheckRedirect: noredirect.Check, Transport: &transport{
		fallback: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         d.DialContext,
			MaxIdleConnsPerHost: PoolLimit,
			IdleConnTimeout:     5 * time.Second,
			TLSHandshakeTimeout: 5 * time.Second,
			DisableCompression:  true,
			WriteBufferSize:     1 << 10,
			ReadBufferSize:      2 << 10,
		},
		dial: d.DialContext, idleFor: 5 * time.Second, maxIdle: PoolLimit,
		readSize: 2 << 10, writeSize: 1 << 10,
	}}
}
