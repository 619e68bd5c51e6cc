package fleet_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/fleet"
	"github.com/gameday-dev/gameday/gameday/load"
)

// speak is a worker speaking the protocol by hand to c as shard 0.
func speak(t *testing.T, c *fleet.Coordinator) func(method, path, body string) (int, string) {
	t.Helper()
	auth, err := fleet.AuthHeader(c.URL(), c.Token())
	if err != nil {
		t.Fatal(err)
	}
	return func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, c.URL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, b.String()
	}
}

// A worker's stream is bounded: by its arrivals (a record more than its
// part fails its shard, naming it), by what a line may be (a line that is
// neither a record nor its end fails it), and by the stalls it may report.
// Before, records beyond its part and lines of nothing were taken for as
// long as a worker sent them.
func TestAWorkersStreamIsBounded(t *testing.T) {
	record := func(i int) string {
		return fmt.Sprintf(`{"shopper":{"Index":%d,"ID":"fleet-%d","Outcome":"confirmed"}}`+"\n", i, i)
	}
	records := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(record(i))
		}
		return b.String()
	}
	stalls := `{"done":{"scheduled":N,"started":N,"stalls":[` + strings.TrimSuffix(strings.Repeat(`{"from_ms":1,"to_ms":2},`, fleet.MaxStalls+1), ",") + `]}}` + "\n"
	for _, c := range []struct {
		name string
		// stream is what the shard sends, for a plan of n arrivals.
		stream func(n int) string
		want   string
	}{
		{"more records than arrivals", func(n int) string { return records(n) + record(0) }, "sent more records than its"},
		{"a line of nothing", func(n int) string { return record(0) + "{}\n" }, "shard 0 sent a line that is neither a record nor its end"},
		{"too many stalls", func(n int) string { return records(n) + strings.ReplaceAll(stalls, "N", fmt.Sprint(n)) }, fmt.Sprintf("shard 0 reported %d stalls", fleet.MaxStalls+1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newShop(t)
			co, ctx := sale(t, s.srv.URL, 1, load.Stage{Duration: time.Second, Target: 10})
			n := len(co.Job().Plan.Arrivals())
			call := speak(t, co)
			go func() {
				call("GET", "/v1/job?shard=0", "")
				call("POST", "/v1/ready?shard=0", `{"rtt_ns": 1000}`)
				call("POST", "/v1/shoppers?shard=0", c.stream(n))
			}()
			if err := co.Join(ctx, 10*time.Second); err != nil {
				t.Fatal(err)
			}
			_, err := co.Send(ctx, time.Now().Add(co.Lead()), nil)
			if !errors.Is(err, fleet.ErrShard) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Send: %v, want %q", err, c.want)
			}
		})
	}
}

// The round trip a worker reports sets how long before the start the
// workers are told of it (four of the slowest): one past MaxRTT, or below
// zero, calls the sale off naming the shard, and the lead is bounded
// whatever comes (four times a huge round trip overflowed into a lead in
// the past).
func TestAWorkersRoundTripIsBounded(t *testing.T) {
	for _, rtt := range []int64{int64(time.Hour), -1, 1 << 62} {
		s := newShop(t)
		co, ctx := sale(t, s.srv.URL, 1, load.Stage{Duration: time.Second, Target: 10})
		call := speak(t, co)
		call("GET", "/v1/job?shard=0", "")
		code, body := call("POST", "/v1/ready?shard=0", fmt.Sprintf(`{"rtt_ns": %d}`, rtt))
		if code != http.StatusBadRequest || !strings.Contains(body, "shard 0 reported a round trip") {
			t.Errorf("rtt %d: %d %s, want it refused", rtt, code, body)
		}
		if err := co.Join(ctx, 5*time.Second); !errors.Is(err, fleet.ErrShard) || !strings.Contains(err.Error(), "round trip") {
			t.Errorf("rtt %d: Join %v, want the sale called off", rtt, err)
		}
		if l := co.Lead(); l <= 0 || l > fleet.MaxLead {
			t.Errorf("rtt %d: lead %s", rtt, l)
		}
	}
}

// The stalls a worker reports with its end are its shard's evidence in the
// run's record (runrecord.Shard.StarvedSpans): what excuses a timing
// promise over the shoppers it timed.
func TestAWorkersStallsReachTheRecord(t *testing.T) {
	s := newShop(t)
	co, ctx := sale(t, s.srv.URL, 1, load.Stage{Duration: time.Second, Target: 10})
	n := len(co.Job().Plan.Arrivals())
	var stream strings.Builder
	for i := range n {
		fmt.Fprintf(&stream, `{"shopper":{"Index":%d,"ID":"fleet-%d","Outcome":"confirmed"}}`+"\n", i, i)
	}
	fmt.Fprintf(&stream, `{"done":{"scheduled":%d,"started":%d,"stalls":[{"from_ms":300,"to_ms":520}],"stalls_cut":2}}`+"\n", n, n)
	call := speak(t, co)
	go func() {
		call("GET", "/v1/job?shard=0", "")
		call("POST", "/v1/ready?shard=0", `{"rtt_ns": 1000}`)
		call("POST", "/v1/shoppers?shard=0", stream.String())
	}()
	if err := co.Join(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := co.Send(ctx, time.Now().Add(co.Lead()), nil); err != nil {
		t.Fatal(err)
	}
	r := co.Shards()[0]
	if len(r.StarvedSpans) != 1 || r.StarvedSpans[0].FromMS != 300 || r.StarvedSpans[0].ToMS != 520 || r.StarvedSpansCut != 2 {
		t.Errorf("shard record %+v: want the worker's stall", r)
	}
}
