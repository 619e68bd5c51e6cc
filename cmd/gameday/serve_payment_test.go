package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/checkout/payment"
)

// The payment stand-in started with -data keeps its books across a SIGKILL:
// started again on the same directory, it lists every charge it answered and
// answers a resend with the same charge, voided ones still voided.
func TestServePaymentBooksSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	dir := filepath.Join(t.TempDir(), "payment-data") // the stand-in creates it
	args := []string{"serve", "payment", "-listen", "127.0.0.1:0", "-data", dir,
		"-min-latency", "0s", "-max-latency", "0s", "-decline-rate", "0"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	charge := func(key string) payment.ChargeRequest {
		return payment.ChargeRequest{Key: key, AmountCents: 1299, Shopper: "s-" + key, SKU: "sku-1"}
	}

	pay, addr, _ := startServer(t, bin, args...)
	c := payment.NewClient("http://"+addr, nil)
	kept, err := c.Charge(ctx, charge("co-1/1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Charge(ctx, charge("co-2/1")); err != nil {
		t.Fatal(err)
	}
	if err := c.Void(ctx, "co-2/1"); err != nil {
		t.Fatal(err)
	}
	before, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// SIGKILL: no shutdown, no chance to close or flush anything.
	if err := pay.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := pay.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("stand-in after SIGKILL: %v, want killed", err)
	}

	_, addr, log := startServer(t, bin, args...)
	c = payment.NewClient("http://"+addr, nil)
	after, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b, a := mustJSON(t, before), mustJSON(t, after); !bytes.Equal(a, b) {
		t.Fatalf("GET /charges after the kill:\n%s\nbefore it:\n%s", a, b)
	}
	again, err := c.Charge(ctx, charge("co-1/1"))
	if err != nil || again.ID != kept.ID || again.Status != payment.StatusApproved {
		t.Fatalf("resend after the kill = %+v, %v; want %s approved", again, err, kept.ID)
	}
	if v, err := c.Charge(ctx, charge("co-2/1")); err != nil || v.Status != payment.StatusVoided {
		t.Fatalf("voided charge after the kill = %+v, %v; want voided", v, err)
	}
	if fresh, err := c.Charge(ctx, charge("co-3/1")); err != nil || fresh.ID != "ch_00000003" {
		t.Fatalf("new charge after the kill = %+v, %v; want ch_00000003, no id handed out twice", fresh, err)
	}
	if l := log.String(); !strings.Contains(l, `msg="payment books replayed"`) || !strings.Contains(l, "charges=2") {
		t.Errorf("log does not report the replay:\n%s", l)
	}
}

// A -data that cannot hold the books is bad input: exit 2, naming it.
func TestServePaymentBadData(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"serve", "payment", "-listen", "127.0.0.1:0", "-data", file}, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "DataDir "+file+": is not a directory") {
		t.Errorf("exit %d, stderr %q; want %d naming DataDir %s", code, stderr.String(), exitUsage, file)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
