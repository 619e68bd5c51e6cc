package payment

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestClientErrors(t *testing.T) {
	tests := []struct {
		name         string
		code         int
		body         string
		wantConflict bool   // errors.Is(err, ErrKeyConflict)
		wantRejected bool   // errors.Is(err, ErrRejected)
		wantMsg      string // part of the error message
	}{
		// A key conflict is a rejection of a particular kind.
		{name: "conflict", code: 409, body: `{"error":"key \"k\" was already used"}`,
			wantConflict: true, wantRejected: true, wantMsg: "already used"},
		// A bad request is rejected: retrying it will not help.
		{name: "bad request", code: 400, body: `{"error":"shopper is required"}`,
			wantRejected: true, wantMsg: "shopper is required"},
		// A wrong base URL gives 404: rejected.
		{name: "not found", code: 404, body: `{"error":"no such path"}`, wantRejected: true, wantMsg: "404"},
		// Too many requests is worth retrying later.
		{name: "too many requests", code: 429, body: `slow down`, wantMsg: "slow down"},
		// A request timeout is worth retrying.
		{name: "request timeout", code: 408, body: ``, wantMsg: "408"},
		// A server error is worth retrying.
		{name: "server error", code: 500, body: `{"error":"boom"}`, wantMsg: "boom"},
		// A proxy in the way that gives up: retriable.
		{name: "bad gateway", code: 502, body: `<html>bad gateway</html>`, wantMsg: "bad gateway"},
		// A success that is not JSON is an error, retriable.
		{name: "garbled success", code: 201, body: `{"id":`, wantMsg: "decode answer"},
		// An unexpected success code is an error too.
		{name: "unexpected 202", code: 202, body: `{}`, wantMsg: "202"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.code)
				_, _ = w.Write([]byte(tt.body))
			}))
			_, err := NewClient(url, nil).Charge(context.Background(), req("k"))
			if err == nil {
				t.Fatal("Charge() = nil error")
			}
			if got := errors.Is(err, ErrKeyConflict); got != tt.wantConflict {
				t.Errorf("errors.Is(%v, ErrKeyConflict) = %v, want %v", err, got, tt.wantConflict)
			}
			if got := errors.Is(err, ErrRejected); got != tt.wantRejected {
				t.Errorf("errors.Is(%v, ErrRejected) = %v, want %v", err, got, tt.wantRejected)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) || !strings.HasPrefix(err.Error(), `charge payment "k": `) {
				t.Errorf("error %q does not start with the operation or lacks %q", err, tt.wantMsg)
			}
			var se *StatusError
			if tt.code != 201 && (!errors.As(err, &se) || se.StatusCode != tt.code) {
				t.Errorf("error %v is not a *StatusError with code %d", err, tt.code)
			}
		})
	}
}

func TestClientAgainstServer(t *testing.T) {
	s, _, url := newTestServer(t, Config{}, nil)
	// A trailing slash in the base URL is fine.
	c := NewClient(url+"/", nil)
	ctx := context.Background()

	ch, err := c.Charge(ctx, req("k"))
	if err != nil {
		t.Fatal(err)
	}
	if ch.Status != StatusApproved || ch.Key != "k" || ch.AmountCents != 1299 || !strings.HasPrefix(ch.ID, "ch_") {
		t.Fatalf("Charge() = %+v", ch)
	}
	other := req("k")
	other.AmountCents = 5
	if _, err := c.Charge(ctx, other); !errors.Is(err, ErrKeyConflict) {
		t.Fatalf("Charge(other amount) = %v, want ErrKeyConflict", err)
	}
	if _, err := c.Charge(ctx, ChargeRequest{Key: "x", AmountCents: 1}); !errors.Is(err, ErrRejected) {
		t.Fatalf("Charge(no shopper) = %v, want ErrRejected", err)
	}
	if err := c.Void(ctx, ""); !errors.Is(err, ErrRejected) {
		t.Fatalf("Void(\"\") = %v, want ErrRejected", err)
	}
	list, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || !sameCharge(list[0], s.Charges()[0]) {
		t.Fatalf("List() = %+v", list)
	}
}

func TestClientHonoursContext(t *testing.T) {
	// The gateway never answers until the request is abandoned. It reads the
	// body first: net/http only notices a closed connection after that.
	url := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	c := NewClient(url, nil)
	tests := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		// A deadline ends the call.
		{name: "deadline", want: context.DeadlineExceeded, ctx: func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}},
		// So does a cancel, here before the call even starts.
		{name: "cancelled", want: context.Canceled, ctx: func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.ctx()
			defer cancel()
			_, err := c.Charge(ctx, req("k"))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Charge() = %v, want %v", err, tt.want)
			}
			if errors.Is(err, ErrRejected) {
				t.Fatalf("a context error must stay retriable: %v", err)
			}
			if err := c.Void(ctx, "k"); !errors.Is(err, tt.want) {
				t.Fatalf("Void() = %v, want %v", err, tt.want)
			}
			if _, err := c.List(ctx); !errors.Is(err, tt.want) {
				t.Fatalf("List() = %v, want %v", err, tt.want)
			}
		})
	}
}
