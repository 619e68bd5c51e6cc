package payment

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
)

// benchBooks are the ways a server can keep its books, benchmarked side by
// side: the in-memory figures must not move when the journal changes, and
// the journal's cost is the difference.
func benchBooks(b *testing.B) []struct {
	name string
	cfg  func(*testing.B) Config
} {
	return []struct {
		name string
		cfg  func(*testing.B) Config
	}{
		{"memory", func(*testing.B) Config { return Config{} }},
		{"journal", func(b *testing.B) Config { return Config{DataDir: b.TempDir()} }},
		{"journal-sync", func(b *testing.B) Config { return Config{DataDir: b.TempDir(), Sync: true} }},
	}
}

// newBenchServer builds a server for cfg that is closed when b ends.
func newBenchServer(b *testing.B, cfg Config) *Server {
	b.Helper()
	s, err := NewServer(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// chargeBody is the body of POST /charges for key i.
func chargeBody(i int64) []byte {
	return []byte(`{"key":"co-` + strconv.FormatInt(i, 10) + `-1","amount_cents":1299,"shopper":"s-1","sku":"sku-1"}`)
}

// serve runs one request through s, as net/http would, and checks its code.
func serve(b *testing.B, s *Server, method, path string, body []byte, want int) {
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(method, path, bytes.NewReader(body)))
	if rec.Code != want {
		b.Fatalf("%s %s: %d %s, want %d", method, path, rec.Code, rec.Body, want)
	}
}

// BenchmarkChargeNewKey measures a first charge: decode, record, answer.
func BenchmarkChargeNewKey(b *testing.B) {
	for _, books := range benchBooks(b) {
		b.Run(books.name, func(b *testing.B) {
			s := newBenchServer(b, books.cfg(b))
			b.ReportAllocs()
			for i := range int64(b.N) {
				serve(b, s, http.MethodPost, "/charges", chargeBody(i), http.StatusCreated)
			}
		})
	}
}

// BenchmarkChargeNewKeyParallel is the same with every CPU charging at once,
// which is where a lock held for longer would show.
func BenchmarkChargeNewKeyParallel(b *testing.B) {
	for _, books := range benchBooks(b) {
		b.Run(books.name, func(b *testing.B) {
			s := newBenchServer(b, books.cfg(b))
			var n atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					serve(b, s, http.MethodPost, "/charges", chargeBody(n.Add(1)), http.StatusCreated)
				}
			})
		})
	}
}

// BenchmarkChargeReplay measures a repeated key: the answer from the books,
// which changes nothing and so is never written down.
func BenchmarkChargeReplay(b *testing.B) {
	for _, books := range benchBooks(b) {
		b.Run(books.name, func(b *testing.B) {
			s := newBenchServer(b, books.cfg(b))
			body := chargeBody(0)
			serve(b, s, http.MethodPost, "/charges", body, http.StatusCreated)
			b.ReportAllocs()
			for b.Loop() {
				serve(b, s, http.MethodPost, "/charges", body, http.StatusOK)
			}
		})
	}
}

// BenchmarkVoid measures a void of an approved charge; every iteration
// charges a new key first, so the figure is a charge plus a void.
func BenchmarkVoid(b *testing.B) {
	for _, books := range benchBooks(b) {
		b.Run(books.name, func(b *testing.B) {
			s := newBenchServer(b, books.cfg(b))
			b.ReportAllocs()
			for i := range int64(b.N) {
				serve(b, s, http.MethodPost, "/charges", chargeBody(i), http.StatusCreated)
				serve(b, s, http.MethodPost, "/charges/void", []byte(`{"key":"co-`+strconv.FormatInt(i, 10)+`-1"}`), http.StatusOK)
			}
		})
	}
}
