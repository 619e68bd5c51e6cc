package wait

import (
	"context"
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
