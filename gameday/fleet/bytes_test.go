package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/fleet"
	"github.com/gameday-dev/gameday/gameday/load"
)

// A worker's stream is bounded in bytes, not only in lines: records of its
// own arrivals, each as large as a line may be (4 MiB), fail its shard,
// naming it and the limit, once they pass 64 MiB and 64 KiB an arrival.
// Before, a shard of n arrivals could make the coordinator hold n times
// 4 MiB of records.
func TestAWorkersStreamIsBoundedInBytes(t *testing.T) {
	s := newShop(t)
	// The byte limit, not the last shopper's deadline, must end the shard
	// however slowly this machine pushes 64 MiB through the race
	// detector: a patience far beyond it (with 2 s, a loaded machine ran
	// past the deadline first, 2 runs in 10).
	j := job(t, s.srv.URL, 1, load.Stage{Duration: time.Second, Target: 60})
	j.Plan.Patience = time.Minute
	co, err := fleet.Listen("127.0.0.1:0", j, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { co.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	n := len(co.Job().Plan.Arrivals())
	const line = 4<<20 - 1<<10 // a record just under the longest line
	limit := 64<<20 + n*64<<10
	if n*line <= limit+line {
		t.Fatalf("%d arrivals of %d bytes stay under %d: the test needs more", n, line, limit)
	}
	auth, err := fleet.AuthHeader(co.URL(), co.Token())
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path string, body io.Reader) {
		req, _ := http.NewRequestWithContext(ctx, method, co.URL()+path, body)
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return // the coordinator may hang up on a stream it refused
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	pr, pw := io.Pipe()
	go func() {
		pad := strings.Repeat("x", line-100)
		for i := range n {
			if _, err := fmt.Fprintf(pw, `{"shopper":{"Index":%d,"ID":"fleet-%d","Outcome":"confirmed","Name":%q}}`+"\n", i, i, pad); err != nil {
				return // refused
			}
		}
		fmt.Fprintf(pw, `{"done":{"scheduled":%d,"started":%d}}`+"\n", n, n)
		pw.Close()
	}()
	go func() {
		call("GET", "/v1/job?shard=0", nil)
		call("POST", "/v1/ready?shard=0", strings.NewReader(`{"rtt_ns": 1000}`))
		call("POST", "/v1/shoppers?shard=0", pr)
		pr.Close()
	}()
	if err := co.Join(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	_, err = co.Send(ctx, time.Now().Add(co.Lead()), nil)
	want := fmt.Sprintf("shard 0 sent more than %d bytes of records, the most %d arrivals may take", limit, n)
	if !errors.Is(err, fleet.ErrShard) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Send: %v, want %q", err, want)
	}
}
