package drive

import (
	"reflect"
	"testing"

	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// Requests that got no answer are counted by kind, most frequent first,
// the first of each kept as a sample; answers, even ones not understood,
// are not among them.
func TestTransportErrorsByKind(t *testing.T) {
	refused := `Post "http://127.0.0.1:8080/buy": dial tcp 127.0.0.1:8080: connect: connection refused`
	r := &load.Report{Shoppers: []*load.Shopper{
		{Attempts: []load.Attempt{{Err: `Post "http://127.0.0.1:8080/buy": read tcp 127.0.0.1:5->127.0.0.1:8080: read: connection reset by peer`}, {Err: refused}}},
		{Attempts: []load.Attempt{{Err: refused}, {Code: 500, Err: "unexpected answer: 500"}, {Err: "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"}}},
		{Attempts: []load.Attempt{{Code: 200, Status: "confirmed"}, {Err: "something else"}}},
	}}
	want := []runrecord.TransportError{
		{Kind: "connection refused", Count: 2, Sample: refused},
		{Kind: "connection reset", Count: 1, Sample: `Post "http://127.0.0.1:8080/buy": read tcp 127.0.0.1:5->127.0.0.1:8080: read: connection reset by peer`},
		{Kind: "timeout", Count: 1, Sample: "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"},
		{Kind: "other", Count: 1, Sample: "something else"},
	}
	if got := transportErrors(r); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if got := transportErrors(&load.Report{}); got != nil {
		t.Errorf("no shoppers: %+v", got)
	}
}
