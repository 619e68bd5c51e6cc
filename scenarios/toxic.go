package scenarios

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// unit is how Toxiproxy takes one toxic attribute.
type unit int

const (
	unitMillis  unit = iota // a duration, sent as whole milliseconds
	unitMicros              // a duration, sent as whole microseconds
	unitBytes               // a whole number of bytes
	unitKBps                // a whole number of KB/s
	unitCount               // a whole number (of requests, or a seed)
	unitShare               // a number from 0 to 1, sent as a float
	unitPattern             // a regular expression (Go syntax), sent as written
	unitChoice              // one of the attribute's choices, sent as written
	unitText                // a line of text, sent as written
	unitHeader              // "Name: expression", sent as written
	unitStatus              // an HTTP error status, 400 to 599
)

// attribute describes one attribute of a toxic type.
type attribute struct {
	unit     unit
	required bool     // a toxic of this type does nothing useful without it
	choices  []string // unitChoice's words
}

// requestAware are the toxics only gameday's Toxiproxy serves, on a proxy
// with a relay behind it (docs/faults.md).
var requestAware = map[string]bool{"lost_reply": true, "http_error": true, "http_lost_response": true, "http_latency": true, "http_malformed": true}

// ReadsHTTP reports whether a toxic type acts on HTTP requests only (the
// HTTP toxics): on a connection that is not plain HTTP it acts on nothing.
func ReadsHTTP(toxicType string) bool {
	return strings.HasPrefix(toxicType, "http_") && requestAware[toxicType]
}

// RequestAware reports whether a toxic type needs gameday's Toxiproxy and
// a relay behind the proxy: a stock Toxiproxy refuses it.
func RequestAware(toxicType string) bool { return requestAware[toxicType] }

// toxicTypes are Toxiproxy v2's toxics and their attributes, as its
// toxics package names them (attributes left out are 0 in Toxiproxy), and
// gameday's request-aware ones.
var toxicTypes = map[string]map[string]attribute{
	// Delays every chunk by latency ± jitter.
	"latency": {"latency": {unit: unitMillis, required: true}, "jitter": {unit: unitMillis}},
	// Limits the rate to rate KB/s.
	"bandwidth": {"rate": {unit: unitKBps, required: true}},
	// Delays the close of the connection by delay.
	"slow_close": {"delay": {unit: unitMillis}},
	// Stops all data and closes the connection after timeout; with
	// timeout 0 it holds the data until the toxic is removed.
	"timeout": {"timeout": {unit: unitMillis}},
	// Resets the connection (TCP RST) timeout after data arrives.
	"reset_peer": {"timeout": {unit: unitMillis}},
	// Slices data into chunks of average_size ± size_variation bytes,
	// delay apart (Toxiproxy takes this one in microseconds).
	"slicer": {"average_size": {unit: unitBytes, required: true}, "size_variation": {unit: unitBytes}, "delay": {unit: unitMicros}},
	// Closes the connection once bytes have been sent.
	"limit_data": {"bytes": {unit: unitBytes, required: true}},
	// Does nothing; checks the plumbing.
	"noop": {},
	// gameday's: lets the request reach the upstream whole, loses its
	// answer, then resets the connection (or holds it: then: hold). Which
	// requests: those of kind kind, matching match, the first first, every every-th,
	// a share probability; seed drives the draws (the run's by default).
	"lost_reply": picking(map[string]attribute{
		"match": {unit: unitPattern}, "then": {unit: unitChoice, choices: []string{"reset", "hold"}},
	}),
	// gameday's HTTP toxics, on the HTTP/1.x requests that match method,
	// path and header: http_error answers them itself (status,
	// retry_after, body, content_type) without forwarding them;
	// http_lost_response forwards them and loses the answer (then: reset,
	// hang or 502); http_latency delays their answers; http_malformed
	// spoils them (how: truncate, wrong_length, cut_json).
	"http_error": httpPicking(map[string]attribute{
		"status": {unit: unitStatus, required: true}, "retry_after": {unit: unitText}, "body": {unit: unitText}, "content_type": {unit: unitText},
	}),
	"http_lost_response": httpPicking(map[string]attribute{"then": {unit: unitChoice, choices: []string{"reset", "hang", "502"}}}),
	"http_latency":       httpPicking(map[string]attribute{"latency": {unit: unitMillis, required: true}, "jitter": {unit: unitMillis}}),
	"http_malformed":     httpPicking(map[string]attribute{"how": {unit: unitChoice, choices: []string{"truncate", "wrong_length", "cut_json"}}}),
}

// picking adds to a request-aware toxic's attributes those that pick
// among the requests it matches: kind (only requests of that kind, as
// gameday names them: "COMMIT", "EVAL", "POST /v1/charges"), first,
// every, probability, seed.
func picking(attrs map[string]attribute) map[string]attribute {
	attrs["kind"] = attribute{unit: unitText}
	attrs["first"], attrs["every"], attrs["seed"] = attribute{unit: unitCount}, attribute{unit: unitCount}, attribute{unit: unitCount}
	attrs["probability"] = attribute{unit: unitShare}
	return attrs
}

// httpPicking adds to an HTTP toxic's attributes those that match
// requests (method, path, header) and picking's.
func httpPicking(attrs map[string]attribute) map[string]attribute {
	attrs["method"], attrs["path"], attrs["header"] = attribute{unit: unitPattern}, attribute{unit: unitPattern}, attribute{unit: unitHeader}
	return picking(attrs)
}

// ToxicTypes returns the toxic types a scenario may use, sorted.
func ToxicTypes() []string { return slices.Sorted(maps.Keys(toxicTypes)) }

// attrProblem is a problem with one part of a toxic, at a path relative to
// the toxic ("type", "attributes.latency").
type attrProblem struct {
	field, msg string
}

// APIAttributes returns the toxic's attributes as Toxiproxy's API takes
// them: durations as whole milliseconds (whole microseconds for slicer's
// delay), other attributes as whole numbers, all int64. Duration
// attributes may be given as duration strings ("250ms"), Duration or
// time.Duration values; others as whole numbers of any Go integer or float
// type. An unknown type or attribute, a missing required attribute or a
// value of the wrong kind is an error naming the attribute.
func (t Toxic) APIAttributes() (map[string]any, error) {
	out, problems := t.check()
	if len(problems) == 0 {
		return out, nil
	}
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = &Error{Field: "toxic." + p.field, Msg: p.msg}
	}
	return nil, fmt.Errorf("convert %s toxic attributes: %w", t.Type, errors.Join(errs...))
}

// check converts the attributes and reports every problem with the toxic's
// type and attributes.
func (t Toxic) check() (map[string]any, []attrProblem) {
	attrs, ok := toxicTypes[t.Type]
	if !ok {
		msg := fmt.Sprintf("unknown toxic type %s (known: %s)", clip(t.Type), strings.Join(ToxicTypes(), ", "))
		if t.Type == "" {
			msg = fmt.Sprintf("required: one of %s", strings.Join(ToxicTypes(), ", "))
		}
		return nil, []attrProblem{{"type", msg}}
	}
	var problems []attrProblem
	out := make(map[string]any, len(t.Attributes))
	for _, name := range slices.Sorted(maps.Keys(t.Attributes)) {
		a, ok := attrs[name]
		field := "attributes." + name
		if !ok {
			known := "none"
			if len(attrs) > 0 {
				known = strings.Join(slices.Sorted(maps.Keys(attrs)), ", ")
			}
			problems = append(problems, attrProblem{field, fmt.Sprintf("unknown attribute of a %s toxic (known: %s)", t.Type, known)})
			continue
		}
		v, err := a.convert(t.Attributes[name])
		if err != nil {
			problems = append(problems, attrProblem{field, err.Error()})
			continue
		}
		out[name] = v
	}
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		if _, given := t.Attributes[name]; attrs[name].required && !given {
			problems = append(problems, attrProblem{"attributes", fmt.Sprintf("a %s toxic needs %s", t.Type, name)})
		}
	}
	if avg, ok := out["average_size"].(int64); ok {
		if v, ok := out["size_variation"].(int64); ok && v >= avg {
			problems = append(problems, attrProblem{"attributes.size_variation", fmt.Sprintf("%d must be less than average_size (%d)", v, avg)})
		}
	}
	return out, problems
}

// convert returns v as Toxiproxy's API takes it: int64 for durations,
// sizes and counts, float64 for a share, the string for a pattern or a
// choice.
func (a attribute) convert(v any) (any, error) {
	switch a.unit {
	case unitPattern:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want a regular expression (a string), got %s", describe(v))
		}
		if _, err := regexp.Compile(s); err != nil {
			return nil, fmt.Errorf("not a regular expression: %v", err)
		}
		return s, nil
	case unitChoice:
		s, ok := v.(string)
		if !ok || !slices.Contains(a.choices, s) {
			return nil, fmt.Errorf("want one of %s, got %s", strings.Join(a.choices, ", "), describe(v))
		}
		return s, nil
	case unitText:
		s, ok := v.(string)
		if !ok || strings.ContainsAny(s, "\r\n") {
			return nil, fmt.Errorf("want a line of text, got %s", describe(v))
		}
		return s, nil
	case unitHeader:
		s, ok := v.(string)
		name, expr, cut := strings.Cut(s, ":")
		if !ok || !cut || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("want \"Name: expression\" (a header and a regular expression for its value), got %s", describe(v))
		}
		if _, err := regexp.Compile(strings.TrimSpace(expr)); err != nil {
			return nil, fmt.Errorf("not a regular expression: %v", err)
		}
		return s, nil
	case unitStatus:
		n, ok := wholeNumber(v)
		if !ok || n < 400 || n > 599 {
			return nil, fmt.Errorf("want an HTTP error status (400 to 599), got %s", describe(v))
		}
		return n, nil
	case unitShare:
		f, ok := number(v)
		if !ok || !(f >= 0 && f <= 1) {
			return nil, fmt.Errorf("want a number from 0 to 1, got %s", describe(v))
		}
		return f, nil
	}
	return a.whole(v)
}

// whole returns v in the attribute's unit, as int64.
func (a attribute) whole(v any) (int64, error) {
	if a.unit == unitMillis || a.unit == unitMicros {
		d, err := durationValue(v)
		if err != nil {
			return 0, err
		}
		step, name := time.Millisecond, "milliseconds"
		if a.unit == unitMicros {
			step, name = time.Microsecond, "microseconds"
		}
		if d%step != 0 {
			return 0, fmt.Errorf("%s is not a whole number of %s (Toxiproxy's unit)", d, name)
		}
		return int64(d / step), nil
	}
	n, ok := wholeNumber(v)
	if !ok {
		what := "bytes"
		switch a.unit {
		case unitKBps:
			what = "KB/s"
		case unitCount:
			what = "a count"
		}
		if a.unit == unitCount {
			return 0, fmt.Errorf("want a whole number, got %s", describe(v))
		}
		return 0, fmt.Errorf("want a whole number of %s, got %s", what, describe(v))
	}
	if n < 0 {
		return 0, fmt.Errorf("%d is negative", n)
	}
	return n, nil
}

// durationValue reads a duration attribute.
func durationValue(v any) (time.Duration, error) {
	var d time.Duration
	switch x := v.(type) {
	case string:
		p, err := parseDuration(x)
		if err != nil {
			return 0, err
		}
		return p.D(), nil
	case Duration:
		d = x.D()
	case time.Duration:
		d = x
	default:
		if n, ok := wholeNumber(v); ok {
			return 0, fmt.Errorf("%d is a bare number, not a duration (write \"%dms\")", n, n)
		}
		return 0, fmt.Errorf("want a duration string such as \"250ms\", got %s", describe(v))
	}
	if d < 0 {
		return 0, fmt.Errorf("%s is negative", d)
	}
	return d, nil
}

// wholeNumber converts any Go integer, or a float with no fraction, to
// int64.
func wholeNumber(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint:
		return int64(x), uint64(x) <= math.MaxInt64
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), x <= math.MaxInt64
	case float32:
		return wholeFloat(float64(x))
	case float64:
		return wholeFloat(x)
	}
	return 0, false
}

// number converts any Go integer or float to float64.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x)
	}
	n, ok := wholeNumber(v)
	return float64(n), ok
}

func wholeFloat(f float64) (int64, bool) {
	if f != math.Trunc(f) || math.IsNaN(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

// describe names a value's kind for errors.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		return "the string " + clip(x)
	case float32, float64, bool:
		return fmt.Sprintf("%v", x)
	}
	if n, ok := wholeNumber(v); ok {
		return strconv.FormatInt(n, 10)
	}
	return fmt.Sprintf("a %T", v)
}
