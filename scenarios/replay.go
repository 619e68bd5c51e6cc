package scenarios

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Replay takes a load's arrivals from a recording of a real day, instead
// of from stages (docs/replay.md): a CSV of arrivals per second or minute
// per journey, or a web server's access log in the common or combined
// format, whose request lines a rule maps to journeys. Parse reads the
// recording and sets the load's stages from it, one held stage per
// bucket, so that the drill's arrivals per second follow the recording,
// times the run's -rate-scale.
type Replay struct {
	// File is the recording, relative to the scenario file; a name that
	// ends in .gz is read through gzip.
	File string `yaml:"file"`
	// Format is "csv" or "access_log".
	Format string `yaml:"format"`
	// Journeys maps each journey replayed to the requests that start it,
	// in an access log: "METHOD /path", the method exact and the path a
	// prefix of the request's (its query left out). A CSV names its
	// journeys in its header.
	Journeys map[string]string `yaml:"journeys"`
	// Bucket is how finely an access log's arrivals are counted: 1s (the
	// default) or a whole number of seconds. A CSV's header says its own.
	Bucket Duration `yaml:"bucket"`
	// From and For choose the part of the recording replayed, in the
	// recording's time from its first bucket; For 0 is to its end.
	From Duration `yaml:"from"`
	For  Duration `yaml:"for"`
	// Speedup compresses the recording's time: its arrivals come Speedup
	// times as fast, over a Speedup-th of the time. Default 1.
	Speedup float64 `yaml:"speedup"`
	// MaxUnreadable is the share of the recording's lines that may be
	// unreadable: they are counted and said, never guessed at; above it
	// the scenario is refused. Default 0.
	MaxUnreadable float64 `yaml:"max_unreadable"`

	// Read is what reading the recording found; set by Parse.
	Read ReplayRead `yaml:"-"`
}

// ReplayRead is what reading a recording found.
type ReplayRead struct {
	// Lines counts the recording's lines of data (not its header, blank
	// lines or comments); Unreadable those that could not be read, the
	// first of them at FirstUnreadable (0: none); Other the access log's
	// requests no journey's rule matched, which are not replayed.
	Lines, Unreadable, Other, FirstUnreadable int
	// Arrivals is how many the part replayed holds, per journey.
	Arrivals map[string]float64
}

// Note says what the replay read, for the run's notes.
func (r *Replay) Note() string {
	var parts []string
	for _, j := range slices.Sorted(maps.Keys(r.Read.Arrivals)) {
		parts = append(parts, fmt.Sprintf("%.0f %s", r.Read.Arrivals[j], j))
	}
	n := fmt.Sprintf("the load replays %s (%s, %d lines): %s arrivals", r.File, r.Format, r.Read.Lines, strings.Join(parts, ", "))
	if r.Speedup != 1 {
		n += fmt.Sprintf(", %g times as fast as recorded", r.Speedup)
	}
	if r.Read.Other > 0 {
		n += fmt.Sprintf("; %d requests no journey's rule matched were left out", r.Read.Other)
	}
	if r.Read.Unreadable > 0 {
		n += fmt.Sprintf("; %d lines could not be read (the first at line %d) and were left out", r.Read.Unreadable, r.Read.FirstUnreadable)
	}
	return n
}

// replayJourney checks a journey a replay names: purchase, or a journey
// of the system file (which gameday validate and the drill check against
// it), by its form.
func replayJourney(j string) error {
	// Its stream's name, replay-NAME, is a name too: at most 64.
	if j == PurchaseJourney || (nameRE.MatchString(j) && len(ReplayStream(j)) <= 64) {
		return nil
	}
	return fmt.Errorf("%s: want purchase or a journey of the system file (lower-case words joined by '-')", clip(j))
}

// ReplayStream is the name of the stream a replay's journey other than
// the purchase is replayed as: replay-browse.
func ReplayStream(journey string) string { return "replay-" + journey }

// maxRecordingLines bounds the lines read of a recording: a day of an
// access log at a few hundred requests a second.
const maxRecordingLines = 50_000_000

// opener opens a recording named relative to the scenario file, and says
// the path it opened.
type opener func(name string) (io.ReadCloser, string, error)

// fileOpener opens recordings relative to the directory of the scenario
// file.
func fileOpener(scenarioFile string) opener {
	return func(name string) (io.ReadCloser, string, error) {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(scenarioFile), name)
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, p, err
		}
		// A FIFO, a device or a directory would block or never end.
		if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
			f.Close()
			if err == nil {
				err = fmt.Errorf("%s is not a regular file", p)
			}
			return nil, p, err
		}
		return f, p, nil
	}
}

// fsOpener opens recordings relative to dir in fsys (the catalogue's).
func fsOpener(fsys fs.FS, dir string) opener {
	return func(name string) (io.ReadCloser, string, error) {
		p := path.Join(dir, name)
		f, err := fsys.Open(p)
		return f, p, err
	}
}

// minStep is the shortest a bucket of the recording may last in the
// drill, after speedup: stages are kept to the millisecond.
const minStep = 10 * time.Millisecond

// replayField names a field of the load's replay.
func replayField(f string) string { return "load.replay." + f }

// checkReplay checks the replay's own fields, before its recording is
// read.
func (v *validator) replay() {
	r := v.s.Load.Replay
	if r == nil {
		return
	}
	if r.File == "" {
		v.add(replayField("file"), "required: the recording, relative to the scenario file")
	}
	switch r.Format {
	case "csv":
		if len(r.Journeys) > 0 {
			v.add(replayField("journeys"), "a CSV names its journeys in its header: leave journeys out")
		}
		if r.Bucket != 0 {
			v.add(replayField("bucket"), "a CSV's header says its bucket (second or minute): leave bucket out")
		}
	case "access_log":
		if len(r.Journeys) == 0 {
			v.add(replayField("journeys"), `required for an access log: which requests start each journey ({purchase: "POST /checkout"})`)
		}
		for _, j := range slices.Sorted(maps.Keys(r.Journeys)) {
			f := replayField("journeys." + j)
			if err := replayJourney(j); err != nil {
				v.add(f, "%v", err)
			} else if _, _, err := parseRule(r.Journeys[j]); err != nil {
				v.add(f, "%v", err)
			}
		}
		if b := r.Bucket.D(); b < 0 || b%time.Second != 0 || b > time.Hour {
			v.add(replayField("bucket"), "%s: want a whole number of seconds, at most 1h", b)
		}
	case "":
		v.add(replayField("format"), "required: csv or access_log")
	default:
		v.add(replayField("format"), "%s: want csv or access_log", clip(r.Format))
	}
	if r.From < 0 {
		v.add(replayField("from"), "%s is negative", r.From)
	}
	if r.For < 0 {
		v.add(replayField("for"), "%s is negative", r.For)
	}
	if !(r.Speedup > 0) || math.IsInf(r.Speedup, 0) {
		v.add(replayField("speedup"), "%g: want a finite number above 0 (1: as recorded)", r.Speedup)
	}
	v.fraction(replayField("max_unreadable"), r.MaxUnreadable)
}

// underPath reports whether target is prefix or lies under it, a path
// segment at a time: /cart is under /cart and holds /cart/items, not
// /cartography; a prefix ending in / holds what follows it.
func underPath(target, prefix string) bool {
	if !strings.HasPrefix(target, prefix) {
		return false
	}
	return len(target) == len(prefix) || strings.HasSuffix(prefix, "/") || target[len(prefix)] == '/'
}

// parseRule reads a journey's rule, "METHOD /path".
func parseRule(rule string) (method, prefix string, err error) {
	method, prefix, ok := strings.Cut(strings.TrimSpace(rule), " ")
	prefix = strings.TrimSpace(prefix)
	if !ok || method == "" || !strings.HasPrefix(prefix, "/") || strings.ContainsAny(prefix, " \t") {
		return "", "", fmt.Errorf("%s: want \"METHOD /path\" (POST /checkout)", clip(rule))
	}
	return method, prefix, nil
}

// counts are a recording's arrivals per bucket, per journey.
type counts struct {
	bucket time.Duration
	by     map[string][]float64 // journey -> arrivals in bucket i
}

func (c *counts) add(journey string, i int, n float64) {
	s := c.by[journey]
	for len(s) <= i {
		s = append(s, 0)
	}
	s[i] += n
	c.by[journey] = s
}

// expandReplay reads the load's recording through open and sets the
// load's stages from it. Problems with the replay's fields are the
// scenario's errors, at their lines; problems with the recording's lines
// name the recording and the line.
func (s *Scenario) expandReplay(open opener) error {
	r := s.Load.Replay
	fail := func(field, format string, args ...any) error {
		return &Error{File: s.File, Line: s.line(field), Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	f, opened, err := open(r.File)
	if errors.Is(err, errStandIn) {
		return errStandIn
	}
	if err != nil {
		return fail(replayField("file"), "%v", err)
	}
	defer f.Close()
	var in io.Reader = f
	if strings.HasSuffix(r.File, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return fail(replayField("file"), "%s: %v", opened, err)
		}
		defer zr.Close()
		in = zr
	}
	r.Read = ReplayRead{}
	var c *counts
	var rerr error
	switch r.Format {
	case "csv":
		c, rerr = readCSV(in, r, opened)
	default:
		c, rerr = readAccessLog(in, r, opened)
	}
	if rerr != nil {
		return rerr
	}
	if r.Read.Lines == 0 {
		return fail(replayField("file"), "%s holds no arrivals", opened)
	}
	if share := float64(r.Read.Unreadable) / float64(r.Read.Lines); share > r.MaxUnreadable {
		return &Error{File: opened, Line: r.Read.FirstUnreadable, Field: "",
			Msg: fmt.Sprintf("%d of %d lines could not be read (%.2f%%; load.replay.max_unreadable allows %.2f%%): the first is line %d", r.Read.Unreadable, r.Read.Lines, share*100, r.MaxUnreadable*100, r.Read.FirstUnreadable)}
	}
	// The recording's length, in buckets: its longest journey's.
	total := 0
	for _, series := range c.by {
		total = max(total, len(series))
	}
	if total == 0 {
		if r.Format == "csv" {
			return fail(replayField("file"), "%s has no readable row (%d unreadable)", opened, r.Read.Unreadable)
		}
		return fail(replayField("journeys"), "no request of %s matched the journeys' rules (%d lines, %d other requests)", opened, r.Read.Lines, r.Read.Other)
	}
	// The part replayed, in buckets of the recording: from the bucket
	// from falls in, for as many buckets as for covers.
	from := int(r.From.D() / c.bucket)
	to := total
	if r.For > 0 {
		to = min(total, from+int((r.For.D()+c.bucket-1)/c.bucket))
	}
	if from >= total {
		return fail(replayField("from"), "%s is past the recording's end (%s of it)", r.From, time.Duration(total)*c.bucket)
	}
	step := float64(c.bucket) / r.Speedup // the drill's time a bucket, ns
	if time.Duration(step) < minStep {
		return fail(replayField("speedup"), "%g compresses a bucket of %s to less than %s", r.Speedup, c.bucket, minStep)
	}
	// Bucket k of the part starts at round(k·step) to the millisecond, so
	// no drift builds up; its rate is its arrivals over its own length.
	at := func(k int) time.Duration { return time.Duration(math.Round(float64(k)*step/1e6)) * time.Millisecond }
	length := at(to - from)
	if length > maxLoad {
		return fail(replayField("speedup"), "the replay lasts %s, more than %s: a drill is minutes long (speedup compresses the recording's time; for chooses a part of it)", length.Round(time.Second), maxLoad)
	}
	r.Read.Arrivals = map[string]float64{}
	all := 0.0
	var streams []Stream
	s.Load.Stages = []Stage{{Duration: Duration(length), Target: 0, Hold: true}} // no purchase recorded: a pause as long
	for _, j := range slices.Sorted(maps.Keys(c.by)) {
		stages, n := heldStages(c.by[j], from, to, at)
		r.Read.Arrivals[j] = n
		all += n
		if j == PurchaseJourney {
			s.Load.Stages = stages
			continue
		}
		if n == 0 {
			continue // a journey with no arrival in the part replayed: no stream
		}
		name := ReplayStream(j)
		if slices.ContainsFunc(s.Load.Streams, func(st Stream) bool { return st.Name == name }) {
			return fail("load.streams", "stream %s is the replay's journey %s: name yours otherwise", name, j)
		}
		retries := s.Load.MaxRetries
		streams = append(streams, Stream{Name: name, Mix: map[string]float64{j: 100}, Stages: stages, Patience: s.Load.Patience, MaxRetries: &retries, Recorded: true})
	}
	s.Load.Streams = append(s.Load.Streams, streams...)
	if all > maxArrivals {
		return fail(replayField("for"), "the part replayed holds %.0f arrivals, more than %d: choose a shorter part (from, for)", all, maxArrivals)
	}
	if all == 0 {
		return fail(replayField("file"), "the part replayed holds no arrival")
	}
	return nil
}

// heldStages is the held stages of one journey's buckets from..to (a
// bucket past the end of series had no arrival), a run of buckets with
// the same arrivals one stage, and the arrivals they hold.
func heldStages(series []float64, from, to int, at func(int) time.Duration) ([]Stage, float64) {
	var stages []Stage
	arrivals, lastN, runArrivals := 0.0, -1.0, 0.0
	for i := from; i < to; i++ {
		n := 0.0
		if i < len(series) {
			n = series[i]
		}
		arrivals += n
		d := at(i-from+1) - at(i-from)
		if k := len(stages) - 1; k >= 0 && n == lastN {
			st := &stages[k]
			st.Duration += Duration(d)
			runArrivals += n
			st.Target = runArrivals / st.Duration.D().Seconds()
			continue
		}
		lastN, runArrivals = n, n
		stages = append(stages, Stage{Duration: Duration(d), Target: n / d.Seconds(), Hold: true})
	}
	return stages, arrivals
}

// readCSV reads a CSV recording: a header "second,<journey>..." or
// "minute,<journey>...", then one row per bucket, its number from 0
// rising, each journey's arrivals in it. Blank lines and lines starting
// with # are skipped; a bucket left out had no arrival.
func readCSV(in io.Reader, r *Replay, opened string) (*counts, error) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	bad := func(line int, format string, args ...any) error {
		return &Error{File: opened, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	var header []string
	c := &counts{by: map[string][]float64{}}
	line, last := 0, -1
	unreadable := func() {
		r.Read.Unreadable++
		if r.Read.FirstUnreadable == 0 {
			r.Read.FirstUnreadable = line
		}
	}
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cols := strings.Split(text, ",")
		for i := range cols {
			cols[i] = strings.TrimSpace(cols[i])
		}
		if header == nil {
			switch cols[0] {
			case "second":
				c.bucket = time.Second
			case "minute":
				c.bucket = time.Minute
			default:
				return nil, bad(line, "the header's first column is %s: want second or minute (the bucket each row counts)", clip(cols[0]))
			}
			if len(cols) < 2 {
				return nil, bad(line, "the header names no journey (second,purchase)")
			}
			for k, j := range cols[1:] {
				if err := replayJourney(j); err != nil {
					return nil, bad(line, "the header's journey %v", err)
				}
				if slices.Contains(cols[1:k+1], j) {
					return nil, bad(line, "journey %s is named twice in the header", clip(j))
				}
			}
			header = cols
			continue
		}
		if r.Read.Lines++; r.Read.Lines > maxRecordingLines {
			return nil, bad(line, "more than %d lines", maxRecordingLines)
		}
		if len(cols) != len(header) {
			unreadable()
			continue
		}
		i, err := strconv.Atoi(cols[0])
		if err != nil || i < 0 {
			unreadable()
			continue
		}
		if i <= last {
			return nil, bad(line, "%s %d comes after %d: the rows' %ss must rise", header[0], i, last, header[0])
		}
		if i > int(31*24*time.Hour/c.bucket) {
			return nil, bad(line, "%s %d is more than a month into the recording", header[0], i)
		}
		vals := make([]float64, len(header)-1)
		ok := true
		for k, col := range cols[1:] {
			v, err := strconv.ParseFloat(col, 64)
			if err != nil || !(v >= 0) || math.IsInf(v, 0) {
				ok = false
				break
			}
			vals[k] = v
		}
		if !ok {
			unreadable()
			continue
		}
		last = i
		for k, v := range vals {
			c.add(header[k+1], i, v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, bad(line+1, "%v", err)
	}
	if header == nil {
		return nil, bad(1, "no header (second,purchase)")
	}
	return c, nil
}

// accessLine is a line of the common log format, which the combined one
// extends: host ident user [time] "request" status size ...
var accessLine = regexp.MustCompile(`^\S+ \S+ \S+ \[([^\]]+)\] "([^"]*)" `)

// readAccessLog counts an access log's requests per bucket, per journey,
// from the second of its first request (matched or not: from and for are
// in the log's time). Lines may be a little out of order, as
// a busy server writes them: requests are counted per second as they are
// read, and bucketed once the first second is known.
func readAccessLog(in io.Reader, r *Replay, opened string) (*counts, error) {
	type rule struct{ journey, method, prefix string }
	var rules []rule
	for _, j := range slices.Sorted(maps.Keys(r.Journeys)) {
		m, p, _ := parseRule(r.Journeys[j]) // checked by Validate
		rules = append(rules, rule{j, m, p})
	}
	bucket := r.Bucket.D()
	if bucket == 0 {
		bucket = time.Second
	}
	bad := func(line int, format string, args ...any) error {
		return &Error{File: opened, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	perSecond := map[string]map[int64]float64{} // journey -> Unix second -> requests
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			continue
		}
		if r.Read.Lines++; r.Read.Lines > maxRecordingLines {
			return nil, bad(line, "more than %d lines", maxRecordingLines)
		}
		m := accessLine.FindStringSubmatch(text)
		var at time.Time
		var err error
		if m != nil {
			at, err = time.Parse("02/Jan/2006:15:04:05 -0700", m[1])
		}
		if m == nil || err != nil {
			r.Read.Unreadable++
			if r.Read.FirstUnreadable == 0 {
				r.Read.FirstUnreadable = line
			}
			continue
		}
		sec := at.Unix()
		first, last = min(first, sec), max(last, sec)
		if last-first > int64(31*24*time.Hour/time.Second) {
			return nil, bad(line, "the log's requests span more than a month (from %s): choose the day to replay", time.Unix(first, 0).UTC().Format(time.RFC3339))
		}
		method, target, _ := strings.Cut(m[2], " ")
		target, _, _ = strings.Cut(target, " ")
		target, _, _ = strings.Cut(target, "?")
		// The most specific rule wins: the longest prefix that matches
		// (GET /cart before GET /), then the journeys' names in order.
		journey, longest := "", -1
		for _, ru := range rules {
			if method == ru.method && underPath(target, ru.prefix) && len(ru.prefix) > longest {
				journey, longest = ru.journey, len(ru.prefix)
			}
		}
		if journey == "" {
			r.Read.Other++
			continue
		}
		js := perSecond[journey]
		if js == nil {
			js = map[int64]float64{}
			perSecond[journey] = js
		}
		js[sec]++
	}
	if err := sc.Err(); err != nil {
		return nil, bad(line+1, "%v", err)
	}
	c := &counts{bucket: bucket, by: map[string][]float64{}}
	per := int64(bucket / time.Second)
	for j, js := range perSecond {
		for sec, n := range js {
			c.add(j, int((sec-first)/per), n)
		}
	}
	return c, nil
}
