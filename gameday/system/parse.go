package system

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/internal/fileerr"
	"github.com/gameday-dev/gameday/internal/health"
	"github.com/gameday-dev/gameday/internal/inputfile"
	"github.com/gameday-dev/gameday/internal/redact"
	"github.com/gameday-dev/gameday/internal/strictyaml"
)

// MaxSize is the largest system file accepted, in bytes.
const MaxSize = strictyaml.MaxSize

// Error is one problem with a system file, located by file, line and
// field path.
type Error = fileerr.Error

// LoadFile reads, parses and validates the system file at path (at most
// MaxSize bytes). vars are the variables ${NAME} may name before the
// process environment is asked (an environment gameday starts gives the
// addresses it chose); see Parse.
func LoadFile(path string, vars map[string]string) (*System, error) {
	data, err := inputfile.Read(path, MaxSize)
	if err != nil {
		return nil, fmt.Errorf("load system: %w", err)
	}
	return Parse(path, data, vars)
}

// Parse reads one system from data, names file in its errors, fills in
// the defaults, validates the whole file and compiles its templates and
// rules. It is as strict as a scenario: one YAML document holding a
// mapping, no anchors, aliases or merge keys, no unknown or repeated keys,
// durations as strings. In string values ${NAME} is replaced by vars[NAME],
// else the environment variable NAME (${NAME:-default} gives a default); a
// name set nowhere is an error. Every error is an *Error naming the file,
// line and field, several joined with errors.Join, and nothing is
// contacted.
func Parse(file string, data []byte, vars map[string]string) (*System, error) {
	return parseFrom(file, data, vars, true)
}

// ParseSource parses a system from its source exactly: a ${NAME} the
// source's Vars do not give is its default or an error, never read from
// this process's environment. It is how a load worker reads the job a
// coordinator sent (FlowSource): the worker's own secrets stay its own.
func ParseSource(src Source) (*System, error) {
	return parseFrom(src.File, src.Data, src.Vars, false)
}

// parseFrom is Parse, reading the environment for a ${NAME} vars lack when
// env is set.
func parseFrom(file string, data []byte, vars map[string]string, env bool) (*System, error) {
	pods, err := readPods(file, data, vars, env)
	if err != nil {
		return nil, err
	}
	if len(pods) == 0 {
		return parseOne(file, data, vars, env)
	}
	return parsePods(file, data, vars, pods, env)
}

// parseOne parses one system (or one pod's copy of a system of pods).
func parseOne(file string, data []byte, vars map[string]string, env bool) (*System, error) {
	root, err := strictyaml.ParseMapping(file, data, "one system", "system fields (name: ..., purchase: ...)")
	if err != nil {
		return nil, err
	}
	var errs []*Error
	d := strictyaml.NewDecoder(file)
	d.AnyBools = true // json: {degraded: true}
	d.Substituted = map[*yaml.Node]bool{}
	used := map[string]string{}
	expandVars(file, root, "", vars, env, used, d.Substituted, &errs)
	if len(errs) > 0 {
		return nil, fileerr.Join(errs)
	}
	d.Lines[""] = root.Line
	s := &System{}
	d.Decode(root, reflect.ValueOf(s).Elem(), "")
	if err := d.Err(); err != nil {
		return nil, err
	}
	s.File = file
	s.lines = d.Lines
	s.source = Source{File: file, Data: append([]byte(nil), data...), Vars: used}
	s.setDefaults()
	if err := s.validate(); err != nil {
		return nil, err
	}
	return s, nil
}

var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expandVars replaces ${NAME} in every scalar value (never in keys), and
// records in used the value each name was given.
func expandVars(file string, n *yaml.Node, path string, vars map[string]string, env bool, used map[string]string, substituted map[*yaml.Node]bool, errs *[]*Error) {
	switch n.Kind {
	case yaml.ScalarNode:
		if !strings.Contains(n.Value, "${") {
			return
		}
		n.Value = varRE.ReplaceAllStringFunc(n.Value, func(m string) string {
			sub := varRE.FindStringSubmatch(m)
			if v, ok := vars[sub[1]]; ok {
				used[sub[1]] = v
				return v
			}
			if v, ok := os.LookupEnv(sub[1]); env && ok && v != "" {
				used[sub[1]] = v
				return v
			}
			if sub[2] != "" {
				used[sub[1]] = sub[3]
				return sub[3]
			}
			*errs = append(*errs, &Error{File: file, Line: n.Line, Field: path, Msg: fmt.Sprintf("${%s} is not set (set it in the environment, or write ${%s:-default})", sub[1], sub[1])})
			return m
		})
		substituted[n] = true // read by what the field wants (strictyaml.Decoder)
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			expandVars(file, n.Content[i+1], strictyaml.JoinPath(path, n.Content[i].Value), vars, env, used, substituted, errs)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			expandVars(file, c, path+"["+strconv.Itoa(i)+"]", vars, env, used, substituted, errs)
		}
	}
}

// stepDefaults names the unnamed steps and gives the default method and
// retry_after.
func stepDefaults(steps []*Step, method string) {
	for i, st := range steps {
		if st == nil {
			continue
		}
		if st.Name == "" {
			st.Name = "step-" + strconv.Itoa(i+1)
		}
		if st.Method == "" {
			st.Method = method
		}
		if len(st.RetryAfter) == 0 {
			st.RetryAfter = []*Extract{{Header: "Retry-After"}}
		}
	}
}

// Defaults.
const (
	DefaultProcessTimeout = 30 * time.Second
	DefaultQueryTimeout   = 10 * time.Second
	DefaultSettleWithin   = 30 * time.Second
	// MaxRetryWithin bounds a setup action's retry_within.
	MaxRetryWithin = 10 * time.Minute
)

func (s *System) setDefaults() {
	stepDefaults(s.Purchase.Steps, http.MethodPost)
	for _, j := range s.Journeys {
		if j != nil {
			stepDefaults(j.Steps, http.MethodGet)
		}
	}
	for name, d := range s.Dependencies {
		if d == nil {
			continue
		}
		switch d.Proxy {
		case NoProxy:
			d.alone = true
		case "":
			d.Proxy = name
		}
		if p := d.Process; p != nil {
			if p.Timeout == 0 {
				p.Timeout = Duration(DefaultProcessTimeout)
			}
			if p.Ready == "" && d.Upstream != "" {
				p.Ready = "tcp://" + d.Upstream
			}
		}
	}
	if s.Books.SettleWithin == 0 {
		s.Books.SettleWithin = Duration(DefaultSettleWithin)
	}
	if c := s.Books.Charges; c != nil {
		if c.Statuses == nil {
			c.Statuses = map[string][]string{}
		}
		for _, st := range []string{"approved", "declined", "voided"} {
			if _, ok := c.Statuses[st]; !ok {
				c.Statuses[st] = []string{st}
			}
		}
	}
}

// validator collects the problems of a system, each located by its field.
type validator struct {
	s    *System
	errs []*Error
}

func (v *validator) add(field, format string, args ...any) {
	line, ok := v.s.lines[field]
	for p := field; !ok && p != ""; {
		p = parentPath(p)
		line, ok = v.s.lines[p]
	}
	v.errs = append(v.errs, &Error{File: v.s.File, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

func parentPath(p string) string {
	if i := strings.LastIndexAny(p, ".["); i >= 0 {
		return p[:i]
	}
	return ""
}

var nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
var depRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// Line returns the line a field path was read from; 0 when unknown.
func (s *System) Line(field string) int { return s.lines[field] }

// Dir is the directory of the system's file: commands run in it, and a
// relative pid_file is read from it, as compose files do.
func (s *System) Dir() string { return filepath.Dir(s.File) }

// Listens is every dependency's listen address, in dependency order: where
// the file asks for proxies, which an embedded Toxiproxy then allows even
// off loopback (the file is the operator's own word).
func (s *System) Listens() []string {
	var out []string
	for _, dep := range slices.Sorted(maps.Keys(s.Dependencies)) {
		if l := s.Dependencies[dep].Listen; l != "" {
			out = append(out, l)
		}
	}
	return out
}

// Where names a field as errors do: FILE:LINE: FIELD.
func (s *System) Where(field string) string {
	return fmt.Sprintf("%s:%d: %s", s.File, s.Line(field), field)
}

func (s *System) validate() error {
	v := &validator{s: s}
	switch {
	case s.Name == "":
		v.add("name", "required: lower-case words joined by '-', such as acme-checkout")
	case len(s.Name) > 64 || !nameRE.MatchString(s.Name):
		v.add("name", "%s: want lower-case words joined by '-' (at most 64 characters)", strictyaml.Quote(s.Name))
	}
	v.httpURL("base_url", s.BaseURL, true)
	switch {
	case s.SKU == "":
		v.add("sku", "required: the product on sale, as the system names it ({{.SKU}} in templates)")
	case len(s.SKU) > 128:
		v.add("sku", "at most 128 characters")
	}
	if s.Toxiproxy != "" {
		if err := checkAddrOrURL(s.Toxiproxy); err != nil {
			v.add("toxiproxy", "%s: %v", strictyaml.Quote(s.Toxiproxy), err)
		}
	}
	v.httpURL("prometheus", s.Prometheus, false)
	if st, ok := s.Stores[s.Admin]; ok && !strings.Contains(s.Admin, "://") {
		if st == nil || st.kind() != "http" {
			v.add("admin", "%s: store %s is not an http store", strictyaml.Quote(s.Admin), s.Admin)
		}
	} else if s.Admin != "" && !strings.Contains(s.Admin, "://") {
		v.add("admin", "%s: want an http(s) URL, or the name of an http store (stores: %s)", strictyaml.Quote(s.Admin), storeNames(s.Stores))
	} else {
		v.httpURL("admin", s.Admin, false)
	}
	v.dependencies()
	v.stores()
	for i, a := range s.Setup {
		p := fmt.Sprintf("setup[%d]", i)
		if a == nil {
			v.add(p, "empty: want one of sql, redis, http, command")
			continue
		}
		v.query(p, &a.Query, queryAction)
		if a.Expect != 0 && (a.HTTP == nil || a.Expect < 100 || a.Expect > 599) {
			v.add(p+".expect", "%d: an HTTP status, for an http action only", a.Expect)
		}
		if a.RetryWithin < 0 || a.RetryWithin.D() > MaxRetryWithin {
			v.add(p+".retry_within", "%s: want a duration from 0 to %s", a.RetryWithin.D(), MaxRetryWithin)
		}
	}
	v.books()
	v.counters()
	v.breakers()
	var c *compiled
	if len(v.errs) == 0 {
		c = v.compile()
	}
	if len(v.errs) > 0 {
		return fileerr.Join(v.errs)
	}
	s.compiled = c
	return nil
}

func (v *validator) httpURL(field, raw string, required bool) {
	if raw == "" {
		if required {
			v.add(field, "required: an http(s) URL")
		}
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Shown redacted: a URL's userinfo or query may hold a token.
		v.add(field, "%s: want an http(s) URL such as http://127.0.0.1:8080", strictyaml.Quote(redact.URL(raw)))
	}
}

func checkAddrOrURL(s string) error {
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("want host:port or an http URL")
		}
		return nil
	}
	return checkHostPort(s)
}

func checkHostPort(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("want host:port")
	}
	if host == "" {
		return fmt.Errorf("want host:port, with a host")
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return fmt.Errorf("want host:port, with a port from 1 to 65535")
	}
	return nil
}

func (v *validator) dependencies() {
	own := v.s.Toxiproxy == ""
	proxies, listens := map[string]string{}, map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(v.s.Dependencies)) {
		d := v.s.Dependencies[name]
		p := "dependencies." + name
		if !depRE.MatchString(name) || len(name) > 64 {
			v.add(p, "%s: a dependency's name is lower-case letters, digits, '-' and '_' (at most 64)", strictyaml.Quote(name))
		}
		if d == nil {
			v.add(p, "empty: want listen and upstream, or proxy")
			continue
		}
		if !d.Proxied() {
			// A process alone (a queue worker): nothing to proxy, and
			// only process faults act on it.
			if d.Process == nil {
				v.add(p+".proxy", "none is a process alone, which only process faults act on: give its process (dependencies.%s.process)", name)
			} else {
				v.process(p+".process", d.Process)
			}
			for _, f := range []struct {
				field string
				set   bool
			}{{"listen", d.Listen != ""}, {"upstream", d.Upstream != ""}, {"protocol", d.Protocol != ""}, {"books", d.Books}, {"password", d.Password != ""}, {"database", d.Database != 0}} {
				if f.set {
					v.add(p+"."+f.field, "a process alone (proxy: none) has no network address: nothing goes through a proxy to it")
				}
			}
			continue
		}
		if other, dup := proxies[d.Proxy]; dup {
			v.add(p+".proxy", "%q is also %s's proxy: each dependency needs its own", d.Proxy, other)
		}
		proxies[d.Proxy] = name
		for _, f := range []struct{ field, val string }{{"listen", d.Listen}, {"upstream", d.Upstream}} {
			switch {
			case f.val == "" && own:
				v.add(p+"."+f.field, "required: gameday starts its own Toxiproxy (no toxiproxy: given), which creates this proxy")
			case f.val != "":
				if err := checkHostPort(f.val); err != nil {
					v.add(p+"."+f.field, "%s: %v", strictyaml.Quote(f.val), err)
				}
			}
		}
		if (d.Listen == "") != (d.Upstream == "") && !own {
			v.add(p, "listen and upstream go together (both, to create the proxy if it is missing; neither, to use it as it is)")
		}
		if d.Listen != "" && d.Listen == d.Upstream {
			v.add(p+".listen", "%s is also its upstream: listen is a free address the proxy takes, which your service is then pointed at; upstream is where the dependency really is", strictyaml.Quote(d.Listen))
		}
		if other, dup := listens[d.Listen]; dup && d.Listen != "" {
			v.add(p+".listen", "%s is also %s's listen address: each proxy needs its own", strictyaml.Quote(d.Listen), other)
		}
		listens[d.Listen] = name
		if pr := d.Process; pr != nil {
			v.process(p+".process", pr)
		}
		if d.Protocol != "" && !slices.Contains(Protocols, d.Protocol) {
			v.add(p+".protocol", "%s: want one of %s (tcp: any other)", strictyaml.Quote(d.Protocol), strings.Join(Protocols, ", "))
		}
		if d.Password != "" && d.Protocol != "redis" {
			v.add(p+".password", "only for a dependency that speaks Redis (protocol: redis): it is what a cache fault sends")
		}
		switch {
		case d.Database != 0 && d.Protocol != "redis":
			v.add(p+".database", "only for a dependency that speaks Redis (protocol: redis): the database a cache fault acts on")
		case d.Database < 0:
			v.add(p+".database", "%d: a Redis database is numbered from 0", d.Database)
		}
	}
}

func (v *validator) process(p string, pr *Process) {
	n := 0
	for _, set := range []bool{pr.Container != "", pr.Systemd != "", pr.Command != nil, pr.PIDFile != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		v.add(p, "want exactly one of container, systemd, command, pid_file (got %d)", n)
	}
	if pr.PIDFile != "" && len(pr.Start) == 0 {
		v.add(p+".start", "required with pid_file: the program that starts the process again")
	}
	if pr.PIDFile == "" && len(pr.Start) > 0 {
		v.add(p+".start", "only with pid_file (a command handle has command.start)")
	}
	if c := pr.Command; c != nil && len(c.Kill)+len(c.Start)+len(c.Pause)+len(c.Resume) == 0 {
		v.add(p+".command", "give at least one of kill, start, pause, resume")
	}
	if pr.Ready != "" {
		if u, err := url.Parse(pr.Ready); err != nil || !slices.Contains([]string{"http", "https", "tcp", "redis"}, u.Scheme) || u.Host == "" {
			v.add(p+".ready", "%s: want an http, https, tcp or redis URL", strictyaml.Quote(health.Redact(pr.Ready)))
		}
	}
}

func (v *validator) stores() {
	for _, name := range slices.Sorted(maps.Keys(v.s.Stores)) {
		st := v.s.Stores[name]
		p := "stores." + name
		if st == nil {
			v.add(p, "empty: want one of postgres, mysql, redis, http")
			continue
		}
		if st.kind() == "" {
			v.add(p, "want exactly one of postgres, mysql, redis, http")
			continue
		}
		switch st.kind() {
		case "redis":
			if strings.Contains(st.Redis, "://") {
				if u, err := url.Parse(st.Redis); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
					v.add(p+".redis", "%s: want host:port or a redis:// URL", strictyaml.Quote(health.Redact(st.Redis)))
				}
			} else if err := checkHostPort(st.Redis); err != nil {
				v.add(p+".redis", "%s: %v", strictyaml.Quote(st.Redis), err)
			}
		case "http":
			v.httpURL(p+".http", st.HTTP, true)
		}
		if len(st.Headers) > 0 && st.kind() != "http" {
			v.add(p+".headers", "for an http store only")
		}
		for _, h := range slices.Sorted(maps.Keys(st.Headers)) {
			switch {
			case !validHeaderName(h):
				v.add(p+".headers."+h, "not a header name")
			case strings.ContainsAny(st.Headers[h], "\r\n\x00"):
				v.add(p+".headers."+h, "a header value is one line")
			}
		}
	}
}

// kind names the store's kind; "" unless exactly one is given.
func (st *Store) kind() string {
	kinds := []struct {
		name string
		set  bool
	}{{"postgres", st.Postgres != ""}, {"mysql", st.MySQL != ""}, {"redis", st.Redis != ""}, {"http", st.HTTP != ""}}
	found := ""
	for _, k := range kinds {
		if k.set {
			if found != "" {
				return ""
			}
			found = k.name
		}
	}
	return found
}

// Kind names the store's kind: postgres, mysql, redis or http.
func (st *Store) Kind() string { return st.kind() }

// queryUse says what a query is for: it decides the shapes allowed.
type queryUse uint8

const (
	queryAction queryUse = iota // setup: a statement or command
	queryValue                  // one number or boolean
	queryRows                   // a list of rows
)

// Kind names the query's kind: sql, redis, http or command; "" unless
// exactly one is given.
func (q *Query) Kind() string {
	found := ""
	for _, k := range []struct {
		name string
		set  bool
	}{{"sql", q.SQL != ""}, {"redis", len(q.Redis) > 0}, {"http", q.HTTP != nil}, {"command", len(q.Command) > 0}} {
		if k.set {
			if found != "" {
				return ""
			}
			found = k.name
		}
	}
	return found
}

func (v *validator) query(p string, q *Query, use queryUse) {
	kind := q.Kind()
	if kind == "" {
		v.add(p, "want exactly one of sql, redis, http, command")
		return
	}
	if kind == "command" {
		if q.Store != "" {
			v.add(p+".store", "a command needs no store")
		}
	} else {
		st, ok := v.s.Stores[q.Store]
		switch {
		case q.Store == "":
			v.add(p+".store", "required: the store to ask (stores: %s)", storeNames(v.s.Stores))
		case !ok || st == nil:
			v.add(p+".store", "%q: no such store (stores: %s)", q.Store, storeNames(v.s.Stores))
		default:
			want := map[string][]string{"sql": {"postgres", "mysql"}, "redis": {"redis"}, "http": {"http"}}[kind]
			if !slices.Contains(want, st.kind()) {
				v.add(p+"."+kind, "store %q is %s, which cannot answer %s", q.Store, st.kind(), kind)
			}
		}
	}
	if len(q.Args) > 0 && kind != "sql" {
		v.add(p+".args", "only for sql")
	}
	if st := v.s.Stores[q.Store]; kind == "sql" && st != nil {
		// Each driver takes its own placeholders; the other's reach the
		// server as text, and fail there after the setup.
		switch {
		case st.kind() == "mysql" && dollarArg.MatchString(q.SQL):
			v.add(p+".sql", "store %q is MySQL, whose placeholders are ?, not $1", q.Store)
		case st.kind() == "postgres" && len(q.Args) > 0 && strings.Contains(q.SQL, "?") && !dollarArg.MatchString(q.SQL):
			v.add(p+".sql", "store %q is PostgreSQL, whose placeholders are $1, $2, ..., not ?", q.Store)
		}
	}
	if h := q.HTTP; h != nil {
		if h.Method == "" {
			h.Method = http.MethodGet
			if use == queryAction && h.Body != "" {
				h.Method = http.MethodPost
			}
		}
		if !validMethod(h.Method) {
			v.add(p+".http.method", "%s: want GET, POST, PUT, PATCH or DELETE", strictyaml.Quote(h.Method))
		}
	}
	if q.Timeout == 0 {
		q.Timeout = Duration(DefaultQueryTimeout)
	}
	switch use {
	case queryAction:
		if q.JSON != "" || q.Items != "" || len(q.Fields) > 0 {
			v.add(p, "a setup action reads nothing: json, items and fields are for books")
		}
	case queryValue:
		if q.Items != "" || len(q.Fields) > 0 {
			v.add(p, "one value is read here: items and fields are for orders and charges")
		}
		if q.JSON != "" && kind != "http" && kind != "command" {
			v.add(p+".json", "only for http and command (sql and redis answer the value itself)")
		}
	case queryRows:
		if q.JSON != "" {
			v.add(p+".json", "rows are read with items (the list) and fields, not json")
		}
		if q.Items != "" && kind != "http" && kind != "command" {
			v.add(p+".items", "only for http and command (sql answers rows, redis a list or hash)")
		}
		for col, f := range q.Fields {
			if f == nil || (f.JSON == "" && f.Regex == "") {
				v.add(p+".fields."+col, "want a GJSON path, or {json: PATH, regex: RE}")
				continue
			}
			if f.Regex != "" {
				re, err := regexp.Compile(f.Regex)
				if err != nil {
					v.add(p+".fields."+col+".regex", "%v", err)
				} else if re.NumSubexp() < 1 {
					v.add(p+".fields."+col+".regex", "%s: needs a group (...) holding the value", strictyaml.Quote(f.Regex))
				}
			}
		}
		if kind == "sql" && len(q.Fields) > 0 {
			v.add(p+".fields", "sql names its columns itself (SELECT cart_id AS checkout_id ...)")
		}
	}
}

func validMethod(m string) bool {
	return slices.Contains([]string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}, m)
}

func storeNames(m map[string]*Store) string {
	if len(m) == 0 {
		return "none declared"
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

// The columns the books read of each order and each charge; a field
// named otherwise would be read by nothing.
var (
	OrderColumns  = []string{"checkout_id", "charge", "units", "amount"}
	ChargeColumns = []string{"checkout_id", "status", "id", "created_at", "amount"}
)

// DeclaredOnly are the columns a JSON, Redis or command answer gives only
// where the query's fields name them, not by a key of the same name: an
// amount must be asked for, so that a shop's orders and its provider's
// charges are compared only once the description says both are in the
// same unit. (An SQL query names its columns itself.)
var DeclaredOnly = map[string]bool{"amount": true}

// GivesAmount reports whether q's rows carry an amount, as far as its
// description tells: fields names it, or an SQL query selects it (the
// word amount between its first SELECT and FROM: AS amount, or a column of
// that name; not WHERE amount > 0). The books check it against the SQL
// answer's columns before the load.
func GivesAmount(q *Query) bool {
	if q.Kind() == "sql" {
		m := selectList.FindStringSubmatch(q.SQL)
		return m != nil && amountWord.MatchString(m[1])
	}
	return q.Fields["amount"] != nil
}

var (
	selectList = regexp.MustCompile(`(?is)\bselect\b(.*?)\bfrom\b`)
	amountWord = regexp.MustCompile(`(?i)\bamount\b`)
	dollarArg  = regexp.MustCompile(`\$[0-9]+`)
)

// columns refuses a field that is none of the columns read from q's rows:
// a misspelt checkout_id would otherwise be found only after the load,
// when no row has one.
func (v *validator) columns(p string, q *Query, cols []string) {
	for _, col := range slices.Sorted(maps.Keys(q.Fields)) {
		if !slices.Contains(cols, col) {
			v.add(p+".fields."+col, "no such column: the books read %s", strings.Join(cols, ", "))
		}
	}
}

func (v *validator) books() {
	b := &v.s.Books
	if st := b.Stock; st != nil {
		for _, f := range []struct {
			name string
			q    *Query
		}{{"available", st.Available}, {"initial", st.Initial}, {"reserved", st.Reserved}, {"sold", st.Sold}} {
			if f.q != nil {
				v.query("books.stock."+f.name, f.q, queryValue)
			}
		}
	}
	if b.Orders != nil {
		v.query("books.orders", b.Orders, queryRows)
		v.columns("books.orders", b.Orders, OrderColumns)
	}
	if c := b.Charges; c != nil {
		v.query("books.charges", &c.Query, queryRows)
		v.columns("books.charges", &c.Query, ChargeColumns)
		seen := map[string]string{}
		for _, st := range slices.Sorted(maps.Keys(c.Statuses)) {
			p := "books.charges.statuses." + st
			if !slices.Contains([]string{"approved", "declined", "voided"}, st) {
				v.add(p, "unknown status (known: approved, declined, voided)")
			}
			if len(c.Statuses[st]) == 0 {
				v.add(p, "empty: list the words your provider uses for it (left out, it is the word %q)", st)
			}
			for _, w := range c.Statuses[st] {
				if other, dup := seen[w]; dup {
					v.add(p, "%s is also under %s", strictyaml.Quote(w), other)
				}
				seen[w] = st
			}
		}
		if c.Zone != "" {
			if _, err := time.LoadLocation(c.Zone); err != nil || c.Zone == "Local" {
				v.add("books.charges.zone", "%s is not a time zone's name (want UTC, or a name such as Europe/Berlin; not Local: the runner's zone is not the shop's)", strictyaml.Quote(c.Zone))
			}
		}
	}
	if b.Settled != nil {
		v.query("books.settled", b.Settled, queryValue)
		if b.SettleAfter != 0 {
			v.add("books.settle_after", "with settled, the books are read once settled says so (for at most settle_within): give one of settled, settle_after")
		}
	}
	if b.SettleAfter < 0 || b.SettleWithin < 0 {
		v.add("books", "settle_within and settle_after cannot be negative")
	}
	if b.Price != "" {
		switch p := b.PriceOf(); {
		case p == nil || p.Sign() <= 0:
			v.add("books.price", "want a positive number in the unit of the books' amounts (1299, or 12.99), got %s", strictyaml.Quote(string(b.Price)))
		case b.Orders == nil:
			v.add("books.price", "needs books.orders: each approved charge is held to the price times its order's units")
		case b.Charges == nil || !GivesAmount(&b.Charges.Query):
			v.add("books.price", "nothing to hold to it: books.charges gives no amount (fields: {amount: ...}, or an SQL column amount)")
		}
	}
}

func (v *validator) counters() {
	for _, name := range slices.Sorted(maps.Keys(v.s.Counters)) {
		p := "counters." + name
		if !depRE.MatchString(name) {
			v.add(p, "a counter's name is lower-case letters, digits, '-' and '_'")
		}
		if q := v.s.Counters[name]; q == nil {
			v.add(p, "empty: give a query that reads one number")
		} else {
			v.query(p, q, queryValue)
		}
	}
}

func (v *validator) breakers() {
	b := v.s.Breakers
	if b == nil {
		return
	}
	switch {
	case (b.Metric == nil) == (b.PromQL == nil):
		v.add("breakers", "want exactly one of metric, promql")
	case b.Metric != nil:
		v.httpURL("breakers.metric.url", b.Metric.URL, true)
	case b.PromQL != nil:
		if b.PromQL.Query == "" {
			v.add("breakers.promql.query", "required: a PromQL query whose series give each breaker's state")
		}
		if b.PromQL.Label == "" {
			v.add("breakers.promql.label", "required: the label that names the breaker")
		}
		if v.s.Prometheus == "" {
			v.add("breakers.promql", "needs prometheus: the Prometheus server to ask")
		}
	}
}

func sortStrings(s []string) []string { slices.Sort(s); return s }

// meaningOf reads a rule's outcome.
func meaningOf(s string) (load.Meaning, bool) { return load.ParseMeaning(s) }
