package wait

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"
)

func TestForEndsWithItsContext(t *testing.T) {
	if !For(context.Background(), time.Millisecond) {
		t.Error("a wait that ran its course says it did not")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if For(ctx, time.Hour) {
		t.Error("a wait cut short by its context says it ran its course")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("a done context still waited %s", d)
	}
	if !Until(context.Background(), time.Now().Add(-time.Second)) {
		t.Error("a time already past did not count as come")
	}
}

func TestLastKeepsTheAnswerBeforeTheDeadline(t *testing.T) {
	answer := errors.New("GET /router/routes: 307 Temporary Redirect")
	live := context.Background()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	cutShort := fmt.Errorf("Get %q: %w", "http://127.0.0.1/router/routes", context.Canceled)
	for _, c := range []struct {
		name      string
		ctx       context.Context
		prev, err error
		want      error
	}{
		{"an attempt its own deadline cut keeps the answer before it", ended, answer, cutShort, answer},
		{"with no answer before it, the cut attempt is all there is", ended, nil, cutShort, cutShort},
		{"a real failure after the deadline replaces the old one", ended, answer, io.EOF, io.EOF},
		{"a context error while the loop's context lives is an answer", live, answer, cutShort, cutShort},
		{"the newest answer wins", live, answer, io.EOF, io.EOF},
	} {
		if got := Last(c.ctx, c.prev, c.err); got != c.want {
			t.Errorf("%s: Last = %v, want %v", c.name, got, c.want)
		}
	}
	if Cut(ended, nil) {
		t.Error("no error counted as cut short")
	}
}
