package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestChargeIdempotency(t *testing.T) {
	base := req("k1")
	otherAmount, otherShopper, otherSKU := base, base, base
	otherAmount.AmountCents++
	otherShopper.Shopper = "someone-else"
	otherSKU.SKU = "sku-2"
	tests := []struct {
		name      string
		decline   float64
		requests  []ChargeRequest
		wantCodes []int
		wantCount int // charges recorded in the end
	}{
		// The same key twice: one charge, replayed with 200.
		{name: "same key twice", requests: []ChargeRequest{base, base},
			wantCodes: []int{201, 200}, wantCount: 1},
		// Two keys are two charges.
		{name: "two keys", requests: []ChargeRequest{base, req("k2")},
			wantCodes: []int{201, 201}, wantCount: 2},
		// A decline is replayed like an approval, not retried.
		{name: "declined replayed", decline: 1, requests: []ChargeRequest{base, base},
			wantCodes: []int{201, 200}, wantCount: 1},
		// Same key, other amount: conflict, nothing charged.
		{name: "other amount", requests: []ChargeRequest{base, otherAmount},
			wantCodes: []int{201, 409}, wantCount: 1},
		// Same key, other shopper: conflict.
		{name: "other shopper", requests: []ChargeRequest{base, otherShopper},
			wantCodes: []int{201, 409}, wantCount: 1},
		// Same key, other SKU: conflict.
		{name: "other sku", requests: []ChargeRequest{base, otherSKU},
			wantCodes: []int{201, 409}, wantCount: 1},
		// A conflict leaves the first charge in place for the right request.
		{name: "conflict then replay", requests: []ChargeRequest{base, otherAmount, base},
			wantCodes: []int{201, 409, 200}, wantCount: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, url := newTestServer(t, Config{DeclineRate: tt.decline}, nil)
			var first Charge
			for i, r := range tt.requests {
				a := postJSON(t, url+"/charges", r)
				if a.code != tt.wantCodes[i] {
					t.Fatalf("request %d: %d %s, want %d", i, a.code, a.body, tt.wantCodes[i])
				}
				switch a.code {
				case http.StatusCreated:
					if r.Key == base.Key {
						first = a.charge(t)
					}
				case http.StatusOK:
					if got := a.charge(t); !sameCharge(got, first) {
						t.Fatalf("replay = %+v, want the first charge %+v", got, first)
					}
				case http.StatusConflict:
					if msg := a.field(t, "error"); !strings.Contains(msg, "k1") {
						t.Errorf("conflict message %q does not name the key", msg)
					}
				}
			}
			if got := len(s.Charges()); got != tt.wantCount {
				t.Fatalf("%d charges recorded, want %d", got, tt.wantCount)
			}
		})
	}
}

func TestChargeConcurrentSameKey(t *testing.T) {
	const n = 20
	cfg := Config{MinLatency: 20 * time.Millisecond, MaxLatency: 20 * time.Millisecond}
	s, _, url := newTestServer(t, cfg, nil)
	body, _ := json.Marshal(req("k"))

	start := make(chan struct{})
	type result struct {
		code int
		c    Charge
		err  error
	}
	results := make(chan result, n)
	for range n {
		go func() {
			<-start
			resp, err := http.Post(url+"/charges", "application/json", strings.NewReader(string(body)))
			if err != nil {
				results <- result{err: err}
				return
			}
			defer resp.Body.Close()
			var c Charge
			err = json.NewDecoder(resp.Body).Decode(&c)
			results <- result{code: resp.StatusCode, c: c, err: err}
		}()
	}
	close(start)
	codes := map[int]int{}
	ids := map[string]bool{}
	for range n {
		r := <-results
		if r.err != nil {
			t.Fatalf("charge: %v", r.err)
		}
		codes[r.code]++
		ids[r.c.ID] = true
	}
	if codes[201] != 1 || codes[200] != n-1 {
		t.Errorf("answers %v, want one 201 and %d 200", codes, n-1)
	}
	if len(ids) != 1 {
		t.Errorf("answers carry %d charge ids, want 1: %v", len(ids), ids)
	}
	if got := len(s.Charges()); got != 1 {
		t.Fatalf("%d charges recorded, want 1", got)
	}
}

func TestChargeWhileFirstIsProcessing(t *testing.T) {
	g := newGate(8)
	cfg := Config{MinLatency: time.Millisecond, MaxLatency: time.Millisecond}
	s, c, url := newTestServer(t, cfg, g.install)
	t.Cleanup(g.release)
	ctx := context.Background()

	type result struct {
		c   Charge
		err error
	}
	first, replay := make(chan result, 1), make(chan result, 1)
	go func() {
		ch, err := c.Charge(ctx, req("k"))
		first <- result{ch, err}
	}()
	await(t, g.started, "k", "start of charge")

	// Another amount is refused at once, while the first is in processing.
	other := req("k")
	other.AmountCents = 1
	if a := postJSON(t, url+"/charges", other); a.code != http.StatusConflict {
		t.Fatalf("other amount during processing: %d %s, want 409", a.code, a.body)
	}
	// The same request waits for the first outcome.
	go func() {
		ch, err := c.Charge(ctx, req("k"))
		replay <- result{ch, err}
	}()
	g.release()
	f, r := <-first, <-replay
	if f.err != nil || r.err != nil {
		t.Fatalf("charges: %v, %v", f.err, r.err)
	}
	if !sameCharge(f.c, r.c) {
		t.Fatalf("second answer %+v, want the first charge %+v", r.c, f.c)
	}
	if got := len(s.Charges()); got != 1 {
		t.Fatalf("%d charges recorded, want 1", got)
	}
}

func TestServerFollowsDraw(t *testing.T) {
	cfg := Config{DeclineRate: 0.5, Seed: 7}
	s1, c1, _ := newTestServer(t, cfg, nil)
	s2, c2, _ := newTestServer(t, cfg, nil)
	ctx := context.Background()
	const n = 40
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("co-%d", i)
	}
	// Server 1 sees the keys in order, server 2 in reverse order.
	for i := range n {
		if _, err := c1.Charge(ctx, req(keys[i])); err != nil {
			t.Fatal(err)
		}
		if _, err := c2.Charge(ctx, req(keys[n-1-i])); err != nil {
			t.Fatal(err)
		}
	}
	status := func(s *Server) map[string]Status {
		m := map[string]Status{}
		for _, c := range s.Charges() {
			m[c.Key] = c.Status
		}
		return m
	}
	st1, st2 := status(s1), status(s2)
	declined := 0
	for _, k := range keys {
		want := StatusApproved
		if cfg.draw(k).declined {
			want = StatusDeclined
			declined++
		}
		if st1[k] != want || st2[k] != want {
			t.Errorf("key %s: servers say %s and %s, draw says %s", k, st1[k], st2[k], want)
		}
	}
	if declined == 0 || declined == n {
		t.Errorf("%d of %d declined: the check proves nothing", declined, n)
	}
}

func TestSlotsBoundProcessing(t *testing.T) {
	const n = 10
	cfg := Config{MinLatency: 40 * time.Millisecond, MaxLatency: 60 * time.Millisecond, Slots: 2}
	g := newGate(n)
	var (
		mu       sync.Mutex
		overSeen int // the most charges in processing seen when one starts
	)
	s, c, _ := newTestServer(t, cfg, func(s *Server) {
		g.install(s)
		s.sleep = func(d time.Duration) { <-g.open; time.Sleep(d) }
		s.hooks.started = func(key string) {
			s.mu.Lock()
			in := s.inFlight
			s.mu.Unlock()
			mu.Lock()
			overSeen = max(overSeen, in)
			mu.Unlock()
			g.started <- key
		}
	})
	t.Cleanup(g.release)

	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := c.Charge(context.Background(), req(fmt.Sprint("k", i)))
			errs <- err
		}()
	}
	// Two charges start and are held: both slots are busy at once.
	for range 2 {
		select {
		case <-g.started:
		case <-time.After(waitLong):
			t.Fatal("timed out waiting for two charges to start")
		}
	}
	s.mu.Lock()
	in := s.inFlight
	s.mu.Unlock()
	if in != 2 {
		t.Fatalf("%d charges in processing with both slots taken, want 2", in)
	}
	g.release()
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	maxIn := s.maxInFlight
	s.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if maxIn != 2 || overSeen > 2 {
		t.Errorf("at most %d (seen %d) charges in processing at once, want 2", maxIn, overSeen)
	}
	if got := len(s.Charges()); got != n {
		t.Fatalf("%d charges recorded, want %d", got, n)
	}
}

func TestClientLeavesWhileWaitingForSlot(t *testing.T) {
	g := newGate(8)
	cfg := Config{MinLatency: time.Millisecond, MaxLatency: time.Millisecond, Slots: 1}
	s, c, url := newTestServer(t, cfg, g.install)
	t.Cleanup(g.release)

	holder := make(chan error, 1)
	go func() {
		_, err := c.Charge(context.Background(), req("holder"))
		holder <- err
	}()
	await(t, g.started, "holder", "start of charge")

	ctx, cancel := context.WithCancel(context.Background())
	leaver := make(chan error, 1)
	go func() {
		_, err := c.Charge(ctx, req("leaver"))
		leaver <- err
	}()
	await(t, g.waiting, "leaver", "charge waiting for a slot")
	cancel()
	if err := <-leaver; !errors.Is(err, context.Canceled) {
		t.Fatalf("Charge after cancel = %v, want context.Canceled", err)
	}
	await(t, g.left, "leaver", "server to drop the waiting charge")

	g.release()
	if err := <-holder; err != nil {
		t.Fatal(err)
	}
	charges := s.Charges()
	if len(charges) != 1 || charges[0].Key != "holder" {
		t.Fatalf("charges = %+v, want only the holder's", charges)
	}
	// No trace of the key is left: the shopper's retry is a new charge.
	a := postJSON(t, url+"/charges", req("leaver"))
	if a.code != http.StatusCreated {
		t.Fatalf("retry after leaving: %d %s, want 201", a.code, a.body)
	}
}

func TestWaiterTakesOverFromLeaver(t *testing.T) {
	g := newGate(8)
	cfg := Config{MinLatency: time.Millisecond, MaxLatency: time.Millisecond, Slots: 1}
	s, c, _ := newTestServer(t, cfg, g.install)
	t.Cleanup(g.release)
	type result struct {
		c   Charge
		err error
	}
	charge := func(ctx context.Context, key string) <-chan result {
		ch := make(chan result, 1)
		go func() {
			got, err := c.Charge(ctx, req(key))
			ch <- result{got, err}
		}()
		return ch
	}

	holder := charge(context.Background(), "holder")
	await(t, g.started, "holder", "start of charge")
	ctx, cancel := context.WithCancel(context.Background())
	leaver := charge(ctx, "k")
	await(t, g.waiting, "k", "charge waiting for a slot")
	stayer := charge(context.Background(), "k") // the shopper's retry, same key
	await(t, g.joined, "k", "retry waiting for the first charge")

	cancel()
	if r := <-leaver; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Charge after cancel = %v, want context.Canceled", r.err)
	}
	await(t, g.left, "k", "server to drop the waiting charge")
	await(t, g.waiting, "k", "retry to wait for a slot in its place")
	g.release()
	if r := <-holder; r.err != nil {
		t.Fatal(r.err)
	}
	r := <-stayer
	if r.err != nil || r.c.Key != "k" || r.c.Status != StatusApproved {
		t.Fatalf("retry = %+v, %v, want an approved charge", r.c, r.err)
	}
	if n := len(s.Charges()); n != 2 {
		t.Fatalf("%d charges recorded, want 2", n)
	}
}

func TestClientDisconnectsDuringProcessing(t *testing.T) {
	g := newGate(8)
	cfg := Config{MinLatency: time.Millisecond, MaxLatency: time.Millisecond}
	s, err := NewServer(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.install(s)
	t.Cleanup(g.release)
	gone := make(chan struct{})
	url := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		go func() {
			<-r.Context().Done()
			close(gone)
		}()
		s.ServeHTTP(w, r)
	}))
	c := NewClient(url, nil)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Charge(ctx, req("k"))
		done <- err
	}()
	await(t, g.started, "k", "start of charge")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Charge after cancel = %v, want context.Canceled", err)
	}
	select {
	case <-gone: // the server saw the client go before processing ended
	case <-time.After(waitLong):
		t.Fatal("timed out waiting for the server to see the client go")
	}
	g.release()
	got := awaitKey(t, g.recorded, "k")
	if got.Status != StatusApproved {
		t.Fatalf("charge status %s, want approved", got.Status)
	}
	if charges := s.Charges(); len(charges) != 1 || !sameCharge(charges[0], got) {
		t.Fatalf("charges = %+v, want [%+v]", charges, got)
	}
}

func TestVoid(t *testing.T) {
	tests := []struct {
		name        string
		decline     float64
		voidsBefore int // voids sent before the charge
		voidsAfter  int // voids sent after the charge is recorded
		want        Status
	}{
		// No void: the charge is approved.
		{name: "no void", want: StatusApproved},
		// A void before the charge leaves a tombstone: the charge is voided.
		{name: "void before charge", voidsBefore: 1, want: StatusVoided},
		// Two voids before the charge are one tombstone.
		{name: "two voids before charge", voidsBefore: 2, want: StatusVoided},
		// A void after approval voids the charge.
		{name: "void after approve", voidsAfter: 1, want: StatusVoided},
		// A second void changes nothing, voided_at included.
		{name: "void twice after approve", voidsAfter: 2, want: StatusVoided},
		// Voids on both sides: still one voided charge.
		{name: "void before and after", voidsBefore: 1, voidsAfter: 1, want: StatusVoided},
		// A declined charge stays declined after a void.
		{name: "void after decline", decline: 1, voidsAfter: 1, want: StatusDeclined},
		// And before one: the outcome does not depend on the order.
		{name: "void before decline", decline: 1, voidsBefore: 1, want: StatusDeclined},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			s, c, url := newTestServer(t, Config{DeclineRate: tt.decline, Now: clock.Now}, nil)
			ctx := context.Background()
			var tombAt string
			for i := range tt.voidsBefore {
				a := postJSON(t, url+"/charges/void", map[string]string{"key": "k"})
				if a.code != http.StatusOK || a.field(t, "status") != "voided" || a.field(t, "key") != "k" {
					t.Fatalf("void before charge: %d %s", a.code, a.body)
				}
				if id := a.field(t, "id"); id != "" {
					t.Fatalf("tombstone answer has id %q", id)
				}
				if i == 0 {
					tombAt = a.field(t, "voided_at")
				} else if at := a.field(t, "voided_at"); at != tombAt {
					t.Fatalf("second void moved voided_at from %s to %s", tombAt, at)
				}
			}
			first, err := c.Charge(ctx, req("k"))
			if err != nil {
				t.Fatal(err)
			}
			var voidedAt *time.Time
			for range tt.voidsAfter {
				a := postJSON(t, url+"/charges/void", map[string]string{"key": "k"})
				if a.code != http.StatusOK {
					t.Fatalf("void after charge: %d %s", a.code, a.body)
				}
				got := a.charge(t)
				if got.ID != first.ID {
					t.Fatalf("void answered charge %s, want %s", got.ID, first.ID)
				}
				if voidedAt != nil && (got.VoidedAt == nil || !got.VoidedAt.Equal(*voidedAt)) {
					t.Fatalf("second void moved voided_at from %v to %v", voidedAt, got.VoidedAt)
				}
				voidedAt = got.VoidedAt
			}
			if err := c.Void(ctx, "k"); err != nil { // the client agrees with every path
				t.Fatal(err)
			}
			charges := s.Charges()
			if len(charges) != 1 {
				t.Fatalf("%d charges recorded, want 1", len(charges))
			}
			got := charges[0]
			wantStatus := tt.want
			if tt.want == StatusApproved { // the client's own void above
				wantStatus = StatusVoided
			}
			if got.Status != wantStatus {
				t.Fatalf("status %s, want %s", got.Status, wantStatus)
			}
			if (got.Status == StatusVoided) != (got.VoidedAt != nil) {
				t.Fatalf("status %s with voided_at %v", got.Status, got.VoidedAt)
			}
			if tt.voidsBefore > 0 && tt.want == StatusVoided {
				if first.Status != StatusVoided {
					t.Fatalf("charge after a void answered %s, want voided", first.Status)
				}
				if at := got.VoidedAt.Format(time.RFC3339Nano); at != tombAt {
					t.Fatalf("voided_at %s, want the tombstone's %s", at, tombAt)
				}
			}
			// A replay of the charge shows its current state.
			again, err := c.Charge(ctx, req("k"))
			if err != nil || !sameCharge(again, got) {
				t.Fatalf("replay = %+v, %v, want %+v", again, err, got)
			}
		})
	}
}

func TestVoidWhileProcessing(t *testing.T) {
	g := newGate(8)
	cfg := Config{MinLatency: time.Millisecond, MaxLatency: time.Millisecond}
	s, c, url := newTestServer(t, cfg, g.install)
	t.Cleanup(g.release)

	done := make(chan Charge, 1)
	go func() {
		ch, _ := c.Charge(context.Background(), req("k"))
		done <- ch
	}()
	await(t, g.started, "k", "start of charge")
	a := postJSON(t, url+"/charges/void", map[string]string{"key": "k"})
	if a.code != http.StatusOK || a.field(t, "id") != "" || a.field(t, "status") != "voided" {
		t.Fatalf("void during processing: %d %s, want a tombstone", a.code, a.body)
	}
	g.release()
	if got := <-done; got.Status != StatusVoided || got.VoidedAt == nil {
		t.Fatalf("charge voided while processing answered %+v, want voided", got)
	}
	if charges := s.Charges(); len(charges) != 1 || charges[0].Status != StatusVoided {
		t.Fatalf("charges = %+v, want one voided", charges)
	}
}

func TestList(t *testing.T) {
	clock := newFakeClock()
	s, c, url := newTestServer(t, Config{Now: clock.Now}, nil)
	ctx := context.Background()

	if a := send(t, ctx, http.MethodGet, url+"/charges", nil); a.code != 200 || strings.TrimSpace(string(a.body)) != `{"charges":[]}` {
		t.Fatalf("empty list: %d %s", a.code, a.body)
	}
	for _, k := range []string{"c", "a", "b"} {
		if _, err := c.Charge(ctx, req(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Void(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	got, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := s.Charges()
	if len(got) != 3 || len(want) != 3 {
		t.Fatalf("List() has %d charges, Charges() %d, want 3", len(got), len(want))
	}
	for i, k := range []string{"c", "a", "b"} {
		if got[i].Key != k || !sameCharge(got[i], want[i]) {
			t.Fatalf("charge %d = %+v, want key %s and %+v", i, got[i], k, want[i])
		}
		if got[i].CreatedAt.IsZero() {
			t.Fatalf("charge %d has no time", i)
		}
		if i > 0 && (!got[i].CreatedAt.After(got[i-1].CreatedAt) || got[i].ID <= got[i-1].ID) {
			t.Fatalf("charges %d and %d out of order: %+v", i-1, i, got)
		}
	}
	if got[1].Status != StatusVoided || got[1].VoidedAt == nil {
		t.Fatalf("voided charge listed as %+v", got[1])
	}
}

// sameCharge compares charges field by field, times by instant.
func sameCharge(a, b Charge) bool {
	va, vb := a.VoidedAt, b.VoidedAt
	a.VoidedAt, b.VoidedAt = nil, nil
	if (va == nil) != (vb == nil) || va != nil && !va.Equal(*vb) {
		return false
	}
	return a.CreatedAt.Equal(b.CreatedAt) && a.ID == b.ID && a.Key == b.Key &&
		a.AmountCents == b.AmountCents && a.Shopper == b.Shopper && a.SKU == b.SKU && a.Status == b.Status
}

func TestChargesOrderWithEqualTimes(t *testing.T) {
	frozen := time.Date(2025, 11, 28, 9, 0, 0, 0, time.UTC)
	s, c, _ := newTestServer(t, Config{Now: func() time.Time { return frozen }}, nil)
	for i := range 12 {
		if _, err := c.Charge(context.Background(), req(fmt.Sprint("k", i))); err != nil {
			t.Fatal(err)
		}
	}
	charges := s.Charges()
	for i := 1; i < len(charges); i++ {
		if charges[i].ID <= charges[i-1].ID {
			t.Fatalf("ids out of order at equal times: %s then %s", charges[i-1].ID, charges[i].ID)
		}
	}
}

func TestBadRequests(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		body    string
		wantMsg string // a part of the error message, naming the problem
	}{
		// Not JSON at all.
		{name: "not json", path: "/charges", body: `hello`, wantMsg: "invalid JSON"},
		// No body.
		{name: "empty", path: "/charges", body: ``, wantMsg: "empty"},
		// Cut short.
		{name: "truncated", path: "/charges", body: `{"key":"k"`, wantMsg: "middle"},
		// JSON null decodes to nothing: the first required field is missing.
		{name: "null", path: "/charges", body: `null`, wantMsg: "key"},
		// An array is not an object.
		{name: "array", path: "/charges", body: `[]`, wantMsg: "array"},
		// No key.
		{name: "missing key", path: "/charges", body: `{"amount_cents":1,"shopper":"s"}`, wantMsg: "key is required"},
		// No shopper.
		{name: "missing shopper", path: "/charges", body: `{"key":"k","amount_cents":1}`, wantMsg: "shopper is required"},
		// No amount.
		{name: "missing amount", path: "/charges", body: `{"key":"k","shopper":"s"}`, wantMsg: "amount_cents"},
		// A negative amount.
		{name: "negative amount", path: "/charges", body: `{"key":"k","shopper":"s","amount_cents":-5}`, wantMsg: "amount_cents"},
		// An amount as a string.
		{name: "amount as string", path: "/charges", body: `{"key":"k","shopper":"s","amount_cents":"12"}`, wantMsg: "amount_cents"},
		// A fractional amount.
		{name: "fractional amount", path: "/charges", body: `{"key":"k","shopper":"s","amount_cents":12.5}`, wantMsg: "amount_cents"},
		// A key that is not a string.
		{name: "key as number", path: "/charges", body: `{"key":5,"shopper":"s","amount_cents":1}`, wantMsg: "key"},
		// A misspelt field is refused, not ignored.
		{name: "unknown field", path: "/charges", body: `{"key":"k","shopper":"s","amount":1}`, wantMsg: `"amount"`},
		// Two objects in one body.
		{name: "trailing data", path: "/charges", body: `{"key":"k","shopper":"s","amount_cents":1} {}`, wantMsg: "more data"},
		// A body over the limit.
		{name: "too large", path: "/charges", body: `{"key":"` + strings.Repeat("k", maxBodyBytes) + `"}`, wantMsg: "exceeds"},
		// A void needs a key.
		{name: "void without key", path: "/charges/void", body: `{}`, wantMsg: "key is required"},
		// A void refuses unknown fields too.
		{name: "void unknown field", path: "/charges/void", body: `{"id":"ch_1"}`, wantMsg: `"id"`},
	}
	s, _, url := newTestServer(t, Config{}, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := send(t, context.Background(), http.MethodPost, url+tt.path, []byte(tt.body))
			if a.code != http.StatusBadRequest {
				t.Fatalf("%d %s, want 400", a.code, a.body)
			}
			if msg := a.field(t, "error"); !strings.Contains(msg, tt.wantMsg) {
				t.Fatalf("error %q does not contain %q", msg, tt.wantMsg)
			}
		})
	}
	if n := len(s.Charges()); n != 0 {
		t.Fatalf("%d charges recorded from bad requests", n)
	}
}

func TestRouting(t *testing.T) {
	tests := []struct {
		name      string
		method    string
		path      string
		wantCode  int
		wantAllow string
	}{
		// Health check.
		{name: "healthz", method: "GET", path: "/healthz", wantCode: 200},
		// HEAD works where GET does.
		{name: "healthz head", method: "HEAD", path: "/healthz", wantCode: 200},
		// The list.
		{name: "list", method: "GET", path: "/charges", wantCode: 200},
		// Unknown path.
		{name: "unknown", method: "GET", path: "/refunds", wantCode: 404},
		// A trailing slash is another path.
		{name: "trailing slash", method: "GET", path: "/charges/", wantCode: 404},
		// Charges cannot be deleted.
		{name: "delete charges", method: "DELETE", path: "/charges", wantCode: 405, wantAllow: "GET, HEAD, POST"},
		// Void is POST only.
		{name: "get void", method: "GET", path: "/charges/void", wantCode: 405, wantAllow: "POST"},
		// Health is read only.
		{name: "post healthz", method: "POST", path: "/healthz", wantCode: 405, wantAllow: "GET, HEAD"},
	}
	_, _, url := newTestServer(t, Config{}, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := http.NewRequest(tt.method, url+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]any
			decErr := json.NewDecoder(resp.Body).Decode(&body)
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("%d %v, want %d", resp.StatusCode, body, tt.wantCode)
			}
			if got := resp.Header.Get("Allow"); got != tt.wantAllow {
				t.Errorf("Allow %q, want %q", got, tt.wantAllow)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			if tt.method == "HEAD" {
				return
			}
			if decErr != nil {
				t.Fatalf("answer is not JSON: %v", decErr)
			}
			if tt.wantCode >= 400 && body["error"] == nil {
				t.Fatalf("error answer %v has no error field", body)
			}
		})
	}
}
