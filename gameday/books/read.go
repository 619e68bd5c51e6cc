package books

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/tidwall/gjson"

	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/redact"
)

// maxOutput bounds what one query may answer.
const maxOutput = 16 << 20

// maxRows bounds the rows of a query: an SQL query's, or a Redis
// collection's (its fields, members or items). (A variable only so that a
// test can lower it.)
var maxRows = 1_000_000

// Value reads one number (a boolean reads as 1 or 0) from q. NaN and the
// infinities are not numbers here: each is an error.
func (r *Reader) Value(ctx context.Context, q *system.Query) (_ float64, err error) {
	defer r.hiding(q, &err)
	ctx, cancel := context.WithTimeout(ctx, q.Timeout.D())
	defer cancel()
	rq := r.sys.Render(q, r.vals)
	switch q.Kind() {
	case "sql":
		var v any
		if err := r.sql[q.Store].QueryRowContext(ctx, rq.SQL, rq.Args...).Scan(&v); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return 0, errors.New("the query returned no row")
			}
			return 0, err
		}
		return number(v)
	case "redis":
		v, err := r.redisDo(ctx, q, rq.Redis)
		if errors.Is(err, redis.Nil) {
			return 0, fmt.Errorf("%v: no such key", rq.Redis)
		}
		if err != nil {
			return 0, err
		}
		return number(v)
	case "http":
		ans, err := r.get(ctx, rq)
		if err != nil {
			return 0, err
		}
		if ans.code/100 != 2 {
			return 0, r.failed(q, rq, ans)
		}
		return jsonNumber(ans.body, q.JSON)
	case "command":
		out, err := run(ctx, r.sys.Dir(), rq.Command)
		if err != nil {
			return 0, err
		}
		if q.JSON == "" {
			return number(strings.TrimSpace(string(out)))
		}
		return jsonNumber(out, q.JSON)
	}
	return 0, errors.New("unknown kind of query")
}

// maxCount bounds a count either way: 2^53, past which a float64 (what a
// JSON number, a float column or a command's text is read as) no longer
// holds every whole number, so that one unit more or less could not be
// told.
const maxCount = 1 << 53

// Count reads one count of units from q: a whole number (12, or 12.0 from
// a decimal column), at most maxCount either way. NaN, an infinity, a
// fraction, or a number past maxCount is an error that names the store (or
// the command) and what it answered: a count cannot be judged from it.
func (r *Reader) Count(ctx context.Context, q *system.Query) (int64, error) {
	v, err := r.Value(ctx, q)
	if err == nil {
		switch {
		case v != math.Trunc(v):
			err = fmt.Errorf("want a whole number of units, got %v", v)
		case math.Abs(v) > maxCount:
			err = fmt.Errorf("want a count, got %v, beyond the ±%d a count can be read as", v, int64(maxCount))
		}
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", r.source(q), err)
	}
	return int64(v), nil
}

// source names where q is asked: "store kv (redis)", or "command
// ./stock.sh".
func (r *Reader) source(q *system.Query) string {
	if q.Kind() == "command" {
		return "command " + q.Command[0]
	}
	kind := "?"
	if st := r.sys.Stores[q.Store]; st != nil {
		kind = st.Kind()
	}
	return fmt.Sprintf("store %s (%s)", q.Store, kind)
}

// Row is one row of a query, its columns as text.
type Row map[string]string

// Rows reads q's rows, with the columns cols (those not in a row are
// empty). An SQL query names its columns itself; a JSON answer gives a list
// at q.Items, each column read at its field's path (default: the field of
// the same name); a Redis list or set gives one row per member, a hash one
// per field (as checkout_id), its value read with the fields.
func (r *Reader) Rows(ctx context.Context, q *system.Query, cols []string) ([]Row, error) {
	t, err := r.Table(ctx, q, cols)
	return t.Rows, err
}

// Table is the rows of a query and, for SQL, the columns its answer has:
// known even when it has no row, so that a column misnamed is found
// before the sale, not after it.
type Table struct {
	Rows    []Row
	Columns []string // SQL only, in lower case
}

// Table reads q's rows as Rows does, with the columns of an SQL answer.
func (r *Reader) Table(ctx context.Context, q *system.Query, cols []string) (_ Table, err error) {
	defer r.hiding(q, &err)
	if q.Kind() == "sql" {
		ctx, cancel := context.WithTimeout(ctx, q.Timeout.D())
		defer cancel()
		return sqlRows(ctx, r.sql[q.Store], r.sys.Render(q, r.vals))
	}
	rows, err := r.rows(ctx, q, cols)
	return Table{Rows: rows}, err
}

func (r *Reader) rows(ctx context.Context, q *system.Query, cols []string) ([]Row, error) {
	ctx, cancel := context.WithTimeout(ctx, q.Timeout.D())
	defer cancel()
	rq := r.sys.Render(q, r.vals)
	fields, err := compileFields(q, cols)
	if err != nil {
		return nil, err
	}
	switch q.Kind() {
	case "redis":
		v, err := r.redisDo(ctx, q, rq.Redis)
		if errors.Is(err, redis.Nil) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		rows, err := redisRows(v, fields, strings.EqualFold(fmt.Sprint(rq.Redis[0]), "HGETALL"))
		if err == nil && len(rows) > maxRows {
			return nil, r.tooMany(q, rq.Redis, fmt.Sprintf("answered %d rows", len(rows)))
		}
		return rows, err
	case "http":
		ans, err := r.get(ctx, rq)
		if err != nil {
			return nil, err
		}
		if ans.code/100 != 2 {
			return nil, r.failed(q, rq, ans)
		}
		return jsonRows(ans.body, q.Items, fields)
	case "command":
		out, err := run(ctx, r.sys.Dir(), rq.Command)
		if err != nil {
			return nil, err
		}
		if t := bytes.TrimSpace(out); len(t) > 0 && (t[0] == '[' || t[0] == '{') {
			return jsonRows(out, q.Items, fields)
		}
		var rows []Row
		for _, line := range strings.Split(string(out), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				rows = append(rows, Row{"checkout_id": line})
			}
		}
		return rows, nil
	}
	return nil, errors.New("unknown kind of query")
}

type field struct {
	col      string
	path     string
	re       *regexp.Regexp
	declared bool // given in the query's fields
}

func compileFields(q *system.Query, cols []string) ([]field, error) {
	var out []field
	for _, c := range cols {
		f := field{col: c, path: c}
		spec, ok := q.Fields[c]
		if !ok && system.DeclaredOnly[c] {
			continue
		}
		if ok && spec != nil {
			f.path, f.declared = spec.JSON, true
			if spec.Regex != "" {
				re, err := regexp.Compile(spec.Regex)
				if err != nil {
					return nil, fmt.Errorf("fields.%s.regex: %w", c, err)
				}
				f.re = re
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// read takes field f out of one item (a JSON document, or plain text).
func (f field) read(item []byte, raw string) string {
	v := raw
	if f.path != "" {
		r := gjson.GetBytes(item, f.path)
		if !r.Exists() || r.Type == gjson.Null {
			return ""
		}
		v = r.String()
	}
	if f.re != nil {
		m := f.re.FindStringSubmatch(v)
		if len(m) < 2 {
			return ""
		}
		v = m[1]
	}
	return v
}

func jsonRows(body []byte, items string, fields []field) ([]Row, error) {
	list := gjson.ParseBytes(body)
	if items != "" {
		list = gjson.GetBytes(body, items)
	}
	if !list.IsArray() {
		if !list.Exists() {
			return nil, fmt.Errorf("want a JSON list at %q, and there is nothing there (the answer: %s)", items, clip(body))
		}
		return nil, fmt.Errorf("want a JSON list at %q, got %s", items, clip([]byte(list.Raw)))
	}
	var rows []Row
	for _, it := range list.Array() {
		row := Row{}
		for _, f := range fields {
			row[f.col] = f.read([]byte(it.Raw), it.String())
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func redisRows(v any, fields []field, hash bool) ([]Row, error) {
	item := func(key, value string) Row {
		row := Row{"checkout_id": key}
		for _, f := range fields {
			if f.col == "checkout_id" && !f.declared {
				continue // the member or hash field itself
			}
			row[f.col] = f.read([]byte(value), value)
		}
		return row
	}
	var rows []Row
	switch x := v.(type) {
	case map[any]any: // a hash, RESP3
		for k, val := range x {
			rows = append(rows, item(fmt.Sprint(k), fmt.Sprint(val)))
		}
	case map[string]string:
		for k, val := range x {
			rows = append(rows, item(k, val))
		}
	case []any: // a list or set; a hash over RESP2 is field, value, ...
		if hash {
			if len(x)%2 != 0 {
				return nil, fmt.Errorf("HGETALL answered %d items, not field-value pairs", len(x))
			}
			for i := 0; i < len(x); i += 2 {
				rows = append(rows, item(fmt.Sprint(x[i]), fmt.Sprint(x[i+1])))
			}
			break
		}
		for _, m := range x {
			s := fmt.Sprint(m)
			rows = append(rows, item(s, s))
		}
	default:
		return nil, fmt.Errorf("want a list, set or hash from Redis, got %T", v)
	}
	slices.SortFunc(rows, func(a, b Row) int { return strings.Compare(a["checkout_id"], b["checkout_id"]) })
	return rows, nil
}

func sqlRows(ctx context.Context, db *sql.DB, rq system.Rendered) (Table, error) {
	rs, err := db.QueryContext(ctx, rq.SQL, rq.Args...)
	if err != nil {
		return Table{}, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return Table{}, err
	}
	t := Table{Columns: make([]string, len(cols))}
	for i, c := range cols {
		t.Columns[i] = strings.ToLower(c)
	}
	// A time of a column that keeps none of its zone (Postgres'
	// timestamp, MySQL's DATETIME and TIMESTAMP, which the server gives
	// in its session's zone) is written without one: the drivers hand it
	// over as UTC, which it need not be, and only the system file can say
	// which zone it is in (books.charges.zone).
	zoneless := make([]bool, len(cols))
	if cts, err := rs.ColumnTypes(); err == nil && len(cts) == len(cols) {
		for i, ct := range cts {
			switch strings.ToUpper(ct.DatabaseTypeName()) {
			case "TIMESTAMP", "DATETIME":
				zoneless[i] = true
			}
		}
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if len(t.Rows) == maxRows {
			return Table{}, fmt.Errorf("more than %d rows: keep this run's only (WHERE checkout_id LIKE '{{.Run}}-%%' as an argument)", maxRows)
		}
		if err := rs.Scan(ptrs...); err != nil {
			return Table{}, err
		}
		row := Row{}
		for i, c := range t.Columns {
			if at, ok := vals[i].(time.Time); ok && zoneless[i] {
				row[c] = at.Format(ZonelessLayout)
				continue
			}
			row[c] = text(vals[i])
		}
		t.Rows = append(t.Rows, row)
	}
	return t, rs.Err()
}

// ZonelessLayout is how a time the store keeps without a zone is written:
// its wall clock, as the store gives it.
const ZonelessLayout = "2006-01-02 15:04:05.999999999"

// text writes a database value as text: times in RFC 3339.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []byte:
		return string(x)
	case string:
		return x
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// number reads v as a number. NaN and the infinities are errors, whatever
// sent them (a float column, a Redis string, a JSON 1e999): no count or
// amount is one, and arithmetic on them gives nonsense that looks like a
// count (NaN is read as -9.2e18 units).
func number(v any) (float64, error) {
	f, err := anyNumber(v)
	if err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return 0, fmt.Errorf("want a number, got %v", f)
	}
	return f, err
}

func anyNumber(v any) (float64, error) {
	switch x := v.(type) {
	case int64:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case int:
		return float64(x), nil
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case []byte:
		return number(string(x))
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "t":
			return 1, nil
		case "false", "f":
			return 0, nil
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, fmt.Errorf("want a number, got %q", clip([]byte(x)))
		}
		return f, nil
	case nil:
		return 0, errors.New("want a number, got NULL (if none means 0, say so: COALESCE(SUM(units), 0))")
	case map[any]any, map[string]any:
		return 0, errors.New("want a number, got a hash or map (of a Redis hash, HLEN counts the fields and HGET reads one)")
	case []any:
		return 0, errors.New("want a number, got a list (of a Redis list, set, sorted set or hash, LLEN, SCARD, ZCARD or HLEN counts it)")
	}
	return 0, fmt.Errorf("want a number, got %T", v)
}

func jsonNumber(body []byte, path string) (float64, error) {
	r := gjson.ParseBytes(body)
	if path != "" {
		r = gjson.GetBytes(body, path)
	}
	switch r.Type {
	case gjson.Number:
		return number(r.Num)
	case gjson.True:
		return 1, nil
	case gjson.False:
		return 0, nil
	case gjson.String:
		return number(r.Str)
	}
	return 0, fmt.Errorf("want a number or a boolean at %q, got %s", path, clip([]byte(r.Raw)))
}

// answer is an http store's answer to a query.
type answer struct {
	code     int
	body     []byte
	location string // a redirect's Location header
}

// get asks an http store: one request, whose answer is the store's, a
// redirect included (the client follows none).
func (r *Reader) get(ctx context.Context, rq system.Rendered) (answer, error) {
	var body io.Reader
	if rq.Body != "" {
		body = strings.NewReader(rq.Body)
	}
	req, err := http.NewRequestWithContext(ctx, rq.Method, rq.URL, body)
	if err != nil {
		return answer{}, err
	}
	for k, v := range rq.Headers {
		req.Header[k] = v
	}
	if rq.Body != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxOutput+1))
	a := answer{code: resp.StatusCode, body: b, location: resp.Header.Get("Location")}
	if err == nil && len(b) > maxOutput {
		a.body = b[:maxOutput]
		return a, &tooLong{rq.Method + " " + redact.URL(rq.URL) + " answered"}
	}
	return a, err
}

// failed is the error of an http query answered other than it should be:
// the request (redacted) and the status, and for a redirect where it
// pointed, else the start of the answer. A redirect is not followed: the
// store is named, with where its file gives its URL.
func (r *Reader) failed(q *system.Query, rq system.Rendered, a answer) error {
	req := rq.Method + " " + redact.URL(rq.URL)
	if a.code/100 == 3 {
		to := "nowhere (no Location)"
		if a.location != "" {
			to = redact.URL(a.location)
			if base, err := url.Parse(rq.URL); err == nil {
				if loc, err := base.Parse(a.location); err == nil {
					to = redact.URL(loc.String())
				}
			}
		}
		return fmt.Errorf("%s answered %d, a redirect to %s: gameday follows no redirect from a store (store %s, %s): give the URL that answers itself", req, a.code, to, q.Store, r.sys.Where("stores."+q.Store))
	}
	return errors.New(scrub(fmt.Sprintf("%s answered %d: %s", req, a.code, clip(a.body)), requestSecrets(rq.URL, rq.Headers)))
}

// tooLong is an answer past maxOutput, cut there. Books never read one:
// a list cut short would read as fewer orders or charges, and a missing
// charge can hide a double charge. A setup action, which reads nothing,
// does not mind.
type tooLong struct{ what string }

func (e *tooLong) Error() string {
	return fmt.Sprintf("%s more than %d MiB: keep this run's only (its checkout ids begin {{.Run}}-)", e.what, maxOutput>>20)
}

// run runs a command (no shell) in dir within ctx and returns its output.
func run(ctx context.Context, dir string, argv []string) ([]byte, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.WaitDelay = time.Second
	var out, errOut limited
	out.max, errOut.max = maxOutput, 4<<10
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", argv[0], err, clip(errOut.b.Bytes()))
	}
	if out.cut {
		return out.b.Bytes(), &tooLong{argv[0] + ": wrote"}
	}
	return out.b.Bytes(), nil
}

// limited keeps at most max bytes written to it, and whether more came.
type limited struct {
	b   bytes.Buffer
	max int
	cut bool
}

func (l *limited) Write(p []byte) (int, error) {
	room := l.max - l.b.Len()
	if len(p) > room {
		l.cut = true
	}
	if room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Settled asks q whether the books are final: a boolean (true when
// settled) or a number of things still open (0 when settled). detail says
// what it answered.
func (r *Reader) Settled(ctx context.Context, q *system.Query) (_ bool, _ string, err error) {
	defer r.hiding(q, &err)
	ctx, cancel := context.WithTimeout(ctx, q.Timeout.D())
	defer cancel()
	rq := r.sys.Render(q, r.vals)
	var v any
	switch q.Kind() {
	case "sql":
		if err := r.sql[q.Store].QueryRowContext(ctx, rq.SQL, rq.Args...).Scan(&v); err != nil {
			return false, "", err
		}
	case "redis":
		x, err := r.redisDo(ctx, q, rq.Redis)
		if err != nil && !errors.Is(err, redis.Nil) {
			return false, "", err
		}
		v = x
	case "http", "command":
		var body []byte
		if q.Kind() == "http" {
			ans, err := r.get(ctx, rq)
			if err != nil {
				return false, "", err
			}
			if ans.code/100 != 2 {
				return false, "", r.failed(q, rq, ans)
			}
			body = ans.body
		} else {
			out, err := run(ctx, r.sys.Dir(), rq.Command)
			if err != nil {
				return false, "", err
			}
			body = out
		}
		res := gjson.ParseBytes(body)
		if q.JSON != "" {
			res = gjson.GetBytes(body, q.JSON)
		}
		switch res.Type {
		case gjson.True, gjson.False:
			v = res.Bool()
		case gjson.Number:
			v = res.Num
		default:
			v = strings.TrimSpace(res.String())
		}
	default:
		return false, "", errors.New("unknown kind of query")
	}
	switch x := v.(type) {
	case bool:
		return x, strconv.FormatBool(x), nil
	case string:
		switch strings.ToLower(x) {
		case "true", "t":
			return true, x, nil
		case "false", "f":
			return false, x, nil
		}
	}
	n, err := number(v)
	if err != nil {
		return false, "", err
	}
	return n == 0, strconv.FormatFloat(n, 'f', -1, 64) + " still open", nil
}
