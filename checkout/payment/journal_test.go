package payment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newDurable builds a server on dir that is closed when the test ends.
func newDurable(tb testing.TB, cfg Config, dir string, logger *slog.Logger) *Server {
	tb.Helper()
	cfg.DataDir = dir
	s, err := NewServer(cfg, logger)
	if err != nil {
		tb.Fatalf("NewServer on %s: %v", dir, err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// serveDurable serves s as newTestServer does and returns a client for it.
func serveDurable(tb testing.TB, s *Server) (*Client, string) {
	tb.Helper()
	url := startServer(tb, s)
	return NewClient(url, nil), url
}

// sameBooks fails unless got and want hold the same charges in the same
// order.
func sameBooks(tb testing.TB, got, want []Charge) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("%d charges, want %d:\n got %+v\nwant %+v", len(got), len(want), got, want)
	}
	for i := range want {
		if !sameCharge(got[i], want[i]) {
			tb.Fatalf("charge %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// A server on a DataDir answers charges and voids; a new server on the same
// DataDir starts with the same books and keeps every promise made on them.
func TestJournalReplay(t *testing.T) {
	for _, sync := range []bool{false, true} {
		t.Run(fmt.Sprintf("sync=%v", sync), func(t *testing.T) {
			dir := t.TempDir()
			clock := newFakeClock()
			// Half the charges declined, so that both outcomes are replayed.
			cfg := Config{DeclineRate: 0.5, Seed: 7, Now: clock.Now, Sync: sync}
			ctx := context.Background()

			s1 := newDurable(t, cfg, dir, nil)
			c1, url1 := serveDurable(t, s1)
			keys := make([]string, 12)
			declined := 0
			for i := range keys {
				keys[i] = fmt.Sprintf("co-%d-1", i)
				ch, err := c1.Charge(ctx, req(keys[i]))
				if err != nil {
					t.Fatal(err)
				}
				if ch.Status == StatusDeclined {
					declined++
				}
			}
			if declined == 0 || declined == len(keys) {
				t.Fatalf("%d of %d declined: pick another seed so that both outcomes are replayed", declined, len(keys))
			}
			// A void for every key: approved ones become voided, declined
			// ones stay declined and write nothing.
			for _, k := range keys[:4] {
				if err := c1.Void(ctx, k); err != nil {
					t.Fatal(err)
				}
			}
			// A void before its charge, consumed by the charge here...
			if err := c1.Void(ctx, "late"); err != nil {
				t.Fatal(err)
			}
			if _, err := c1.Charge(ctx, req("late")); err != nil {
				t.Fatal(err)
			}
			// ...and one whose charge only comes after the restart.
			tomb := postJSON(t, url1+"/charges/void", map[string]string{"key": "ghost"})
			if tomb.code != http.StatusOK {
				t.Fatalf("void ghost: %d %s", tomb.code, tomb.body)
			}
			before := s1.Charges()
			listBefore := send(t, ctx, http.MethodGet, url1+"/charges", nil)
			if err := s1.Close(); err != nil {
				t.Fatal(err)
			}

			s2 := newDurable(t, cfg, dir, nil)
			c2, url2 := serveDurable(t, s2)
			sameBooks(t, s2.Charges(), before)
			// GET /charges answers exactly as before the restart.
			if listAfter := send(t, ctx, http.MethodGet, url2+"/charges", nil); !bytes.Equal(listAfter.body, listBefore.body) {
				t.Fatalf("GET /charges after replay:\n%s\nbefore:\n%s", listAfter.body, listBefore.body)
			}
			// The same key returns the same charge, in its current state.
			for _, want := range before {
				a := postJSON(t, url2+"/charges", req(want.Key))
				if a.code != http.StatusOK || !sameCharge(a.charge(t), want) {
					t.Fatalf("resend %s after replay: %d %s, want 200 with %+v", want.Key, a.code, a.body, want)
				}
			}
			// The key still remembers what it was used for.
			other := req(keys[0])
			other.AmountCents++
			if _, err := c2.Charge(ctx, other); !errors.Is(err, ErrKeyConflict) {
				t.Fatalf("other amount after replay = %v, want ErrKeyConflict", err)
			}
			// A voided charge stays voided, voided_at included.
			for _, want := range before {
				if want.Status != StatusVoided {
					continue
				}
				a := postJSON(t, url2+"/charges/void", map[string]string{"key": want.Key})
				if a.code != http.StatusOK || !sameCharge(a.charge(t), want) {
					t.Fatalf("void %s again after replay: %d %s, want %+v", want.Key, a.code, a.body, want)
				}
			}
			// The tombstone survived: the charge lands voided at its time,
			// unless the provider declines it.
			ghost, err := c2.Charge(ctx, req("ghost"))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.draw("ghost").declined {
				if ghost.Status != StatusDeclined {
					t.Fatalf("ghost = %+v, want declined", ghost)
				}
			} else if ghost.Status != StatusVoided || ghost.VoidedAt == nil || ghost.VoidedAt.Format(time.RFC3339Nano) != tomb.field(t, "voided_at") {
				t.Fatalf("ghost = %+v, want voided at the tombstone's %s", ghost, tomb.field(t, "voided_at"))
			}
			// Ids go on from the last one: none is handed out twice.
			if last := before[len(before)-1].ID; ghost.ID <= last {
				t.Fatalf("charge after replay got id %s, not after %s", ghost.ID, last)
			}

			// What the second server wrote replays too.
			after := s2.Charges()
			if err := s2.Close(); err != nil {
				t.Fatal(err)
			}
			s3 := newDurable(t, cfg, dir, nil)
			sameBooks(t, s3.Charges(), after)
		})
	}
}

// A process killed while a charge is processing never answered it, and a
// restarted one has no trace of it: the key is charged afresh on resend.
func TestJournalChargeInFlightIsNotInTheBooks(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{MinLatency: time.Millisecond, MaxLatency: time.Millisecond}
	ctx := context.Background()
	s0 := newDurable(t, cfg, dir, nil)
	c0, _ := serveDurable(t, s0)
	first, err := c0.Charge(ctx, req("done"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s0.Close(); err != nil {
		t.Fatal(err)
	}

	g := newGate(8)
	s1 := newDurable(t, cfg, dir, nil)
	g.install(s1)
	c1, _ := serveDurable(t, s1)
	t.Cleanup(g.release)
	errc := make(chan error, 1)
	go func() {
		_, err := c1.Charge(ctx, req("k"))
		errc <- err
	}()
	await(t, g.started, "k", "start of charge")
	// The journal as a kill at this moment leaves it.
	snapshot := newDurable(t, cfg, dir, nil)
	sameBooks(t, snapshot.Charges(), []Charge{first})
	if err := snapshot.Close(); err != nil {
		t.Fatal(err)
	}

	// The first server can no longer write: its charge in flight is not
	// recorded, and its client gets an answer worth retrying.
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	g.release()
	err = <-errc
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusInternalServerError || errors.Is(err, ErrRejected) {
		t.Fatalf("charge whose record failed = %v, want a retriable 500", err)
	}
	if !strings.Contains(err.Error(), "record charge") {
		t.Errorf("error %q does not say what failed", err)
	}
	sameBooks(t, s1.Charges(), []Charge{first})

	// The restarted provider charges the key afresh, once.
	s2 := newDurable(t, cfg, dir, nil)
	c2, _ := serveDurable(t, s2)
	again, err := c2.Charge(ctx, req("k"))
	if err != nil || again.Status != StatusApproved || again.ID != "ch_00000002" {
		t.Fatalf("resend after restart = %+v, %v; want a new approved ch_00000002", again, err)
	}
	want := s2.Charges()
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	sameBooks(t, newDurable(t, cfg, dir, nil).Charges(), want)
}

// A server whose journal is closed changes nothing: a charge or a void it
// cannot write down answers 500 and is not in its books.
func TestJournalClosedChangesNothing(t *testing.T) {
	dir := t.TempDir()
	s := newDurable(t, Config{}, dir, nil)
	c, url := serveDurable(t, s)
	ctx := context.Background()
	if _, err := c.Charge(ctx, req("a")); err != nil {
		t.Fatal(err)
	}
	want := s.Charges()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close() = %v, want nil", err)
	}
	for _, tt := range []struct{ path, key, msg string }{
		{"/charges", "b", "record charge"},        // a new charge
		{"/charges/void", "a", "record void"},     // a void of an approved charge
		{"/charges/void", "ghost", "record void"}, // a tombstone
	} {
		var body any = req(tt.key)
		if tt.path == "/charges/void" {
			body = map[string]string{"key": tt.key}
		}
		a := postJSON(t, url+tt.path, body)
		if a.code != http.StatusInternalServerError || !strings.Contains(a.field(t, "error"), tt.msg) {
			t.Errorf("POST %s %s: %d %s, want 500 naming %q", tt.path, tt.key, a.code, a.body, tt.msg)
		}
	}
	sameBooks(t, s.Charges(), want)
	// The tombstone was not left either.
	if a := postJSON(t, url+"/charges", req("ghost")); a.code != http.StatusInternalServerError {
		t.Fatalf("charge ghost: %d %s", a.code, a.body)
	}
	sameBooks(t, newDurable(t, Config{}, dir, nil).Charges(), want)
}

// A last line without its newline was being written when the process died:
// it is ignored with a warning and cut off, so that the next line does not
// glue onto it.
func TestJournalTornLastLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, journalFile)
	s1 := newDurable(t, Config{}, dir, nil)
	c1, _ := serveDurable(t, s1)
	ctx := context.Background()
	for _, k := range []string{"a", "b"} {
		if _, err := c1.Charge(ctx, req(k)); err != nil {
			t.Fatal(err)
		}
	}
	want := s1.Charges()
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"op":"charge","charge":{"id":"ch_00000003","key":"c"`); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	var logs bytes.Buffer
	s2 := newDurable(t, Config{}, dir, slog.New(slog.NewTextHandler(&logs, nil)))
	sameBooks(t, s2.Charges(), want)
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "torn last line") ||
		!strings.Contains(l, path) || !strings.Contains(l, "line=3") {
		t.Errorf("log does not warn about line 3 of %s:\n%s", path, l)
	}
	c2, _ := serveDurable(t, s2)
	ch, err := c2.Charge(ctx, req("c"))
	if err != nil || ch.ID != "ch_00000003" {
		t.Fatalf("charge c after the torn line = %+v, %v; want ch_00000003", ch, err)
	}
	want = s2.Charges()
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	sameBooks(t, newDurable(t, Config{}, dir, slog.New(slog.NewTextHandler(&logs, nil))).Charges(), want)
	if strings.Contains(logs.String(), "torn") {
		t.Errorf("the torn line was not cut off:\n%s", logs.String())
	}
}

// Any other line that cannot be replayed stops the server from starting,
// with an error that names the file and the line.
func TestJournalCorruptLine(t *testing.T) {
	const (
		a = `{"op":"charge","charge":{"id":"ch_00000001","key":"a","amount_cents":1299,"shopper":"s-a","sku":"sku-1","status":"approved","created_at":"2025-11-28T09:00:01Z"}}`
		c = `{"op":"charge","charge":{"id":"ch_00000003","key":"c","amount_cents":1299,"shopper":"s-c","sku":"sku-1","status":"approved","created_at":"2025-11-28T09:00:03Z"}}`
	)
	// charge returns a charge line with the given fields spliced in.
	charge := func(fields string) string {
		return `{"op":"charge","charge":{` + fields + `,"amount_cents":1299,"shopper":"s","created_at":"2025-11-28T09:00:02Z"}}`
	}
	tests := []struct {
		name string
		line string // line 2, between two good lines
		last bool   // line 2 is the last line instead, with its newline
		want string // part of the error
	}{
		// Not JSON at all.
		{name: "garbage", line: `hello`, want: "decode: invalid character"},
		// An empty line is never written.
		{name: "empty", line: ``, want: "decode: EOF"},
		// Two objects on one line.
		{name: "two objects", line: `{"op":"void","key":"a","at":"2025-11-28T09:00:02Z"}{}`, want: "more data after the JSON object"},
		// A field nobody writes.
		{name: "unknown field", line: `{"op":"void","key":"a","at":"2025-11-28T09:00:02Z","who":"me"}`, want: `unknown field "who"`},
		// A kind of change nobody writes.
		{name: "unknown op", line: `{"op":"refund","key":"a"}`, want: `op "refund": want charge or void`},
		// A charge line without its charge.
		{name: "no charge", line: `{"op":"charge"}`, want: "charge is required"},
		// A charge without a key.
		{name: "no key", line: charge(`"id":"ch_00000002","status":"approved"`), want: "charge: key is required"},
		// A status that does not exist.
		{name: "bad status", line: charge(`"id":"ch_00000002","key":"b","status":"pending"`), want: `charge.status "pending"`},
		// A voided charge with no time of void.
		{name: "voided without time", line: charge(`"id":"ch_00000002","key":"b","status":"voided"`), want: "charge.voided_at is required"},
		// An approved charge with a time of void.
		{name: "approved with void time", line: charge(`"id":"ch_00000002","key":"b","status":"approved","voided_at":"2025-11-28T09:00:02Z"`), want: "charge.voided_at is set"},
		// An id in another format.
		{name: "bad id", line: charge(`"id":"2","key":"b","status":"approved"`), want: `charge.id "2": want ch_ and a number`},
		// Ids are written in order: one that goes back is not ours.
		{name: "id goes back", line: charge(`"id":"ch_00000001","key":"b","status":"approved"`), want: `charge.id "ch_00000001" is not after ch_00000001`},
		// A key charged twice.
		{name: "key twice", line: charge(`"id":"ch_00000002","key":"a","status":"approved"`), want: `charge.key "a" was already charged`},
		// A void without its key or time.
		{name: "void without key", line: `{"op":"void","at":"2025-11-28T09:00:02Z"}`, want: "key is required in a void"},
		{name: "void without time", line: `{"op":"void","key":"a"}`, want: "at is required in a void"},
		// A corrupt last line that ends with its newline was written
		// whole: it is not torn, it is wrong.
		{name: "complete last line", line: `{"op":"void"`, last: true, want: "decode: unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, journalFile)
			content := a + "\n" + tt.line + "\n"
			if !tt.last {
				content += c + "\n"
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := NewServer(Config{DataDir: dir}, nil)
			if err == nil {
				_ = s.Close()
				t.Fatalf("NewServer replayed line 2 %q", tt.line)
			}
			var je *JournalError
			if !errors.As(err, &je) || je.File != path || je.Line != 2 {
				t.Fatalf("NewServer() = %v, want a *JournalError for %s line 2", err, path)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "create payment server: ") || !strings.Contains(msg, path+": line 2: ") ||
				!strings.Contains(msg, tt.want) {
				t.Errorf("error %q does not name the file, the line and %q", msg, tt.want)
			}
			// Nothing was changed: the file is left for the operator.
			if got, _ := os.ReadFile(path); string(got) != content {
				t.Errorf("journal changed to %q", got)
			}
		})
	}
}

// DataDir is checked like every other field, and created when missing.
func TestDataDir(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		cfg   Config
		field string // the field the error names; "" means valid
		msg   string // part of the error
	}{
		// A directory that does not exist yet is created, parents too.
		{name: "missing", cfg: Config{DataDir: filepath.Join(tmp, "a", "b")}},
		// An existing directory, flushed on every write.
		{name: "existing with sync", cfg: Config{DataDir: tmp, Sync: true}},
		// A file is not a directory.
		{name: "file", cfg: Config{DataDir: file}, field: "DataDir", msg: "is not a directory"},
		// Nor can anything be created under one.
		{name: "under a file", cfg: Config{DataDir: filepath.Join(file, "sub")}, field: "DataDir", msg: "cannot be used"},
		// Nothing to flush without a journal.
		{name: "sync in memory", cfg: Config{Sync: true}, field: "Sync", msg: "needs DataDir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewServer(tt.cfg, nil)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("NewServer() = %v", err)
				}
				defer s.Close()
				if fi, err := os.Stat(filepath.Join(tt.cfg.DataDir, journalFile)); err != nil || !fi.Mode().IsRegular() {
					t.Fatalf("no journal in %s: %v", tt.cfg.DataDir, err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("NewServer() = %v, want a *ConfigError on %s saying %q", err, tt.field, tt.msg)
			}
			if tt.cfg.DataDir != "" && !strings.Contains(err.Error(), tt.cfg.DataDir) {
				t.Errorf("error %q does not name the directory", err)
			}
		})
	}
}

// FuzzJournal replays arbitrary journal contents. The server must never
// panic, must refuse what it cannot replay with a *JournalError, and what it
// accepts must replay to the same books again.
func FuzzJournal(f *testing.F) {
	f.Add([]byte(`{"op":"charge","charge":{"id":"ch_00000001","key":"a","amount_cents":1299,"shopper":"s","status":"approved","created_at":"2025-11-28T09:00:01Z"}}` + "\n" +
		`{"op":"void","key":"a","at":"2025-11-28T09:00:02Z"}` + "\n"))
	f.Add([]byte(`{"op":"void","key":"b","at":"2025-11-28T09:00:02Z"}` + "\n" + `{"op":"charge","charge":{"id":"ch_00000007","key":"b","amount_cents":1,"shopper":"s","status":"voided","created_at":"2025-11-28T09:00:03Z","voided_at":"2025-11-28T09:00:02Z"}}` + "\n"))
	f.Add([]byte(`{"op":"charge","charge":{"id":"ch_1"`))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, content []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, journalFile), content, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := NewServer(Config{DataDir: dir}, nil)
		if err != nil {
			var je *JournalError
			if !errors.As(err, &je) {
				t.Fatalf("NewServer() = %v, want a *JournalError", err)
			}
			return
		}
		first := s.Charges()
		for _, c := range first {
			if (c.Status == StatusVoided) != (c.VoidedAt != nil) {
				t.Fatalf("replayed %+v", c)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s, err = NewServer(Config{DataDir: dir, Now: func() time.Time { return time.Time{} }}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatalf("second replay: %v", err)
		}
		defer s.Close()
		sameBooks(t, s.Charges(), first)
	})
}
