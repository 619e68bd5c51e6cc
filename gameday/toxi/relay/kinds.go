package relay

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Kind names a request by its protocol's first words, read from its first
// bytes without keeping a connection's state: a Postgres or MySQL
// statement by its verb and table ("BEGIN", "UPDATE products", "INSERT
// INTO orders", "SELECT FROM products", "COMMIT"), a Redis command by its
// name ("EVAL", "INCR", "GET"), an HTTP request by its method and its
// path with the parts that vary written {id} ("POST /v1/charges", "GET
// /products/{id}"). A connection's opening (a Postgres startup or TLS
// request, a MySQL login) is "connect"; bytes none of those is "other".
// The kind is what explore counts and aims faults at, and what a
// request-aware toxic's kind attribute matches.
func Kind(req []byte) string {
	switch {
	case len(req) == 0:
		return "other"
	case req[0] == '*':
		return redisKind(req)
	}
	// A MySQL packet whose length is the read's is one, whatever its
	// first byte: its length's low byte can look like a Postgres message.
	if k, ok := mysqlKind(req); ok && mysqlLength(req) == len(req) {
		return k
	}
	if k, ok := postgresKind(req); ok {
		return k
	}
	if k, ok := mysqlKind(req); ok {
		return k
	}
	if looksHTTP(req) {
		line, _, _ := bytes.Cut(req, []byte("\r\n"))
		if parts := strings.SplitN(string(line), " ", 3); len(parts) == 3 {
			return HTTPKind(parts[0], parts[1])
		}
	}
	if k := inlineRedisKind(req); k != "" {
		return k
	}
	return "other"
}

// SameKind reports whether a toxic's kind want names requests of kind
// got: the same words, without case; a script by its hash either way, so
// that EVALSHA 1a2b3c4d names the script's EVAL too (go-redis sends it
// whole after Redis answers NOSCRIPT: after a restart).
func SameKind(want, got string) bool {
	if strings.EqualFold(want, got) {
		return true
	}
	w, wh, ok1 := strings.Cut(want, " ")
	g, gh, ok2 := strings.Cut(got, " ")
	script := func(c string) bool {
		c = strings.ToUpper(c)
		return c == "EVAL" || c == "EVALSHA" || c == "EVAL_RO" || c == "EVALSHA_RO"
	}
	return ok1 && ok2 && script(w) && script(g) && strings.EqualFold(wh, gh) &&
		strings.HasSuffix(strings.ToUpper(w), "_RO") == strings.HasSuffix(strings.ToUpper(g), "_RO")
}

// maxStatements bounds the prepared statements a connection's kinds are
// remembered for.
const maxStatements = 1024

// statements are, for one connection, the kinds of the Postgres
// statements it prepared, by name: a statement is run by name in a
// request of its own (Bind, Execute), whose kind is the statement's.
type statements map[string]string

// kind names a request as Kind does, with what the connection prepared: a
// Postgres request that runs a statement (Bind and Execute) is the
// statement's kind ("UPDATE products"), one that only prepares it is
// "PREPARE UPDATE products" (it changes nothing), one that runs a
// statement prepared before this relay saw the connection is "EXECUTE".
func (st *statements) kind(req []byte) string {
	if len(req) < 5 || !strings.ContainsRune("PBDESHC", rune(req[0])) || mysqlLength(req) == len(req) {
		// Not a run of Postgres messages, or a MySQL packet whose
		// length's low byte looks like one: Kind tells them apart.
		return Kind(req)
	}
	if *st == nil {
		*st = statements{}
	}
	var parsed, bound string
	executed, known := false, false
	for pos := 0; pos+5 <= len(req); {
		n := int(binary.BigEndian.Uint32(req[pos+1:]))
		if n < 4 || n > 1<<30 {
			break
		}
		body := req[pos+5 : min(pos+1+n, len(req))]
		switch req[pos] {
		case 'P':
			name, rest, _ := bytes.Cut(body, []byte{0})
			q, _, _ := bytes.Cut(rest, []byte{0})
			parsed = SQLKind(string(q))
			if len(*st) >= maxStatements {
				clear(*st)
			}
			(*st)[string(name)] = parsed
			known = true
		case 'B':
			_, rest, _ := bytes.Cut(body, []byte{0})
			stmt, _, _ := bytes.Cut(rest, []byte{0})
			bound = (*st)[string(stmt)]
			known = true
		case 'E':
			executed = true
		case 'D', 'S', 'H', 'C':
			known = true
		default:
			return Kind(req)
		}
		pos += 1 + n
	}
	switch {
	case !known:
		return Kind(req)
	case executed && bound != "":
		return bound
	case executed && parsed != "":
		return parsed
	case executed:
		return "EXECUTE"
	case parsed != "":
		return "PREPARE " + parsed
	}
	return Kind(req)
}

// redisKind is a RESP array's first bulk string, upper-cased: the
// command ("*2\r\n$3\r\nGET\r\n…" is GET). A script is named by its
// SHA-1's first eight hex digits too, so that each script a shop runs is a
// kind of its own: "EVALSHA 1a2b3c4d" for the script whose EVAL is "EVAL
// 1a2b3c4d". A pipeline is named by its first command.
func redisKind(req []byte) string {
	name, rest, ok := bulk(req)
	if !ok {
		return "other"
	}
	cmd := word(name, 24)
	switch cmd {
	case "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO":
		arg, _, ok := bulkAt(rest)
		if !ok {
			return cmd
		}
		if strings.HasPrefix(cmd, "EVALSHA") {
			if len(arg) >= 8 && !bytes.ContainsFunc(arg[:8], func(r rune) bool { return !strings.ContainsRune("0123456789abcdefABCDEF", r) }) {
				return cmd + " " + strings.ToLower(string(arg[:8]))
			}
			return cmd
		}
		sum := sha1.Sum(arg)
		return cmd + " " + hex.EncodeToString(sum[:4])
	}
	return cmd
}

// bulk reads a RESP array's header and its first bulk string; rest is
// what follows that string.
func bulk(req []byte) (s, rest []byte, ok bool) {
	_, rest, ok = bytes.Cut(req, []byte("\r\n"))
	if !ok {
		return nil, nil, false
	}
	return bulkAt(rest)
}

// bulkAt reads the bulk string at the start of b ("$3\r\nGET\r\n"),
// whole when b holds it (a script's text may pass the first read; then
// what is there).
func bulkAt(b []byte) (s, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '$' {
		return nil, nil, false
	}
	head, body, ok := bytes.Cut(b, []byte("\r\n"))
	if !ok {
		return nil, nil, false
	}
	n, err := strconv.Atoi(string(head[1:]))
	if err != nil || n < 0 {
		return nil, nil, false
	}
	if n > len(body) {
		return body, nil, true
	}
	return body[:n], body[min(n+2, len(body)):], true
}

// inlineRedisKind is a Redis inline command ("PING\r\n"), as redis-cli
// and a telnet send, or any line protocol's command: one word of letters,
// then the line's end or a space.
func inlineRedisKind(req []byte) string {
	line, _, ok := bytes.Cut(req, []byte("\n"))
	if !ok {
		return ""
	}
	line = bytes.TrimSuffix(line, []byte("\r"))
	w, _, _ := bytes.Cut(line, []byte(" "))
	if len(w) == 0 || len(w) > 16 || bytes.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) >= 0 {
		return ""
	}
	return strings.ToUpper(string(w))
}

// postgresKind names a Postgres frontend message: a simple query ('Q')
// or an extended query's Parse ('P') by its statement; Bind, Execute and
// Sync alone (a prepared statement run again) as "EXECUTE"; the startup
// and TLS requests as "connect". ok is false for bytes that are not a
// Postgres message.
func postgresKind(req []byte) (string, bool) {
	if len(req) >= 8 && req[0] == 0 {
		// A startup message or an SSL/GSS request: a length, then a
		// protocol code.
		n := binary.BigEndian.Uint32(req)
		code := binary.BigEndian.Uint32(req[4:])
		if n >= 8 && n < 10000 && (code == 196608 || code == 80877103 || code == 80877104 || code == 80877102) {
			return "connect", true
		}
		return "", false
	}
	if len(req) < 5 {
		return "", false
	}
	n := binary.BigEndian.Uint32(req[1:])
	if n < 4 || n > 1<<30 {
		return "", false
	}
	body := req[5:]
	if int(n-4) < len(body) {
		body = body[:n-4]
	}
	switch req[0] {
	case 'Q':
		q, _, _ := bytes.Cut(body, []byte{0})
		return SQLKind(string(q)), true
	case 'P':
		// The statement's name, then its text.
		_, q, _ := bytes.Cut(body, []byte{0})
		q, _, _ = bytes.Cut(q, []byte{0})
		return SQLKind(string(q)), true
	case 'B', 'E', 'S', 'D', 'H':
		return "EXECUTE", true
	case 'p':
		return "connect", true // a password or SASL answer
	case 'X':
		return "close", true
	}
	return "", false
}

// mysqlLength is the length of the MySQL packet req begins with, its
// header counted.
func mysqlLength(req []byte) int {
	if len(req) < 4 {
		return -1
	}
	return (int(req[0]) | int(req[1])<<8 | int(req[2])<<16) + 4
}

// mysqlKind names a MySQL client packet: COM_QUERY (0x03) by its
// statement, COM_STMT_PREPARE (0x16) by the statement prepared,
// COM_STMT_EXECUTE (0x17) as "EXECUTE", the login (sequence 1) as
// "connect". ok is false for bytes that are not such a packet.
func mysqlKind(req []byte) (string, bool) {
	if len(req) < 5 {
		return "", false
	}
	n := int(req[0]) | int(req[1])<<8 | int(req[2])<<16
	seq := req[3]
	if n == 0 {
		return "", false
	}
	if seq == 1 && n > 32 {
		return "connect", true // the handshake response
	}
	if seq != 0 {
		return "", false
	}
	switch req[4] {
	case 0x03, 0x16:
		end := min(len(req), 4+n)
		return SQLKind(string(req[5:end])), true
	case 0x17:
		return "EXECUTE", true
	case 0x01:
		return "close", true
	case 0x0e:
		return "PING", true
	}
	return "", false
}

// SQLKind names a statement by its verb and, where it has one, its table:
// "INSERT INTO orders", "UPDATE products", "DELETE FROM holds", "SELECT
// FROM products" (the first table after FROM), "BEGIN" (START TRANSACTION
// too), "COMMIT", "ROLLBACK" (ABORT too), or the verb alone ("SET",
// "WITH"). Comments before the verb are skipped; names lose their quotes.
func SQLKind(q string) string {
	q = skipSQLNoise(q)
	verb, rest := sqlWord(q)
	verb = strings.ToUpper(verb)
	switch verb {
	case "":
		return "other"
	case "START":
		if w, _ := sqlWord(rest); strings.EqualFold(w, "TRANSACTION") {
			return "BEGIN"
		}
	case "BEGIN", "COMMIT", "ROLLBACK", "END":
		if verb == "END" {
			return "COMMIT"
		}
		return verb
	case "ABORT":
		return "ROLLBACK"
	case "INSERT", "REPLACE":
		w, r := sqlWord(rest)
		if strings.EqualFold(w, "INTO") {
			w, _ = sqlWord(r)
		}
		return verb + " INTO " + table(w)
	case "UPDATE":
		w, _ := sqlWord(rest)
		return "UPDATE " + table(w)
	case "DELETE":
		w, r := sqlWord(rest)
		if strings.EqualFold(w, "FROM") {
			w, _ = sqlWord(r)
		}
		return "DELETE FROM " + table(w)
	case "SELECT":
		if t := afterFrom(rest); t != "" {
			return "SELECT FROM " + table(t)
		}
		return "SELECT"
	}
	return word([]byte(verb), 24)
}

// afterFrom is the first name after a FROM of q at the top level (not in
// parentheses), "" when there is none.
func afterFrom(q string) string {
	depth := 0
	for {
		q = strings.TrimLeftFunc(q, unicode.IsSpace)
		if q == "" {
			return ""
		}
		w, rest := sqlWord(q)
		if w == "" {
			switch q[0] {
			case '(':
				depth++
			case ')':
				depth--
			}
			q = q[1:]
			continue
		}
		if depth == 0 && strings.EqualFold(w, "FROM") {
			t, _ := sqlWord(rest)
			return t
		}
		q = rest
	}
}

// sqlWord is q's next word after spaces (letters, digits, _, ., $, or a
// quoted name whole) and what follows it; "" when q does not begin with
// one.
func sqlWord(q string) (string, string) {
	q = strings.TrimLeftFunc(q, unicode.IsSpace)
	if q == "" {
		return "", ""
	}
	if q[0] == '"' || q[0] == '`' {
		if end := strings.IndexByte(q[1:], q[0]); end >= 0 {
			// A quoted name, maybe schema-qualified: "public"."orders".
			n := end + 2
			for n < len(q) && q[n] == '.' {
				w, _ := sqlWord(q[n+1:])
				n += 1 + len(w)
			}
			return q[:n], q[n:]
		}
	}
	n := strings.IndexFunc(q, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.' || r == '$' || r == '"' || r == '`')
	})
	if n < 0 {
		n = len(q)
	}
	return q[:n], q[n:]
}

// skipSQLNoise drops spaces, comments and opening parentheses before a
// statement's verb.
func skipSQLNoise(q string) string {
	for {
		q = strings.TrimLeftFunc(q, func(r rune) bool { return unicode.IsSpace(r) || r == '(' })
		switch {
		case strings.HasPrefix(q, "--"):
			_, q, _ = strings.Cut(q, "\n")
		case strings.HasPrefix(q, "/*"):
			_, q, _ = strings.Cut(q, "*/")
		default:
			return q
		}
	}
}

// table is a table's name as a kind shows it: without quotes, lower case,
// at most 48 characters; "?" when there is none.
func table(name string) string {
	name = strings.NewReplacer(`"`, "", "`", "").Replace(name)
	if name == "" {
		return "?"
	}
	return strings.ToValidUTF8(strings.ToLower(name[:min(len(name), 48)]), "")
}

// word is b upper-cased, cut to at most n characters, printable.
func word(b []byte, n int) string {
	b = b[:min(len(b), n)]
	if len(b) == 0 || bytes.IndexFunc(b, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
		return "other"
	}
	return strings.ToUpper(string(b))
}

// HTTPKind names an HTTP request by its method and its path, the query
// left out and each part of the path that varies from request to request
// written {id}: a part with a digit in it, or a long one of hexadecimal
// digits and dashes (a UUID, a hash). "GET /products/42?x=1" is "GET
// /products/{id}".
func HTTPKind(method, target string) string {
	if i := strings.Index(target, "://"); i >= 0 {
		// An absolute form (a request to a proxy): its path.
		rest := target[i+3:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			target = rest[j:]
		} else {
			target = "/"
		}
	}
	path, _, _ := strings.Cut(target, "?")
	path, _, _ = strings.Cut(path, "#")
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if varies(p) {
			parts[i] = "{id}"
		}
	}
	path = strings.Join(parts, "/")
	if len(path) > 80 {
		path = strings.ToValidUTF8(path[:80], "") + "…"
	}
	return word([]byte(method), 16) + " " + path
}

// varies reports whether a path's part is an identifier rather than a
// name: it has a digit (a version, v1 or v2.1, excepted), or is 16 or
// more characters of hexadecimal digits and dashes.
func varies(p string) bool {
	if strings.ContainsFunc(p, unicode.IsDigit) {
		return !version(p)
	}
	if len(p) < 16 {
		return false
	}
	return !strings.ContainsFunc(p, func(r rune) bool {
		return !(r == '-' || (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F'))
	})
}

// version reports whether p is an API's version: v, then digits and dots.
func version(p string) bool {
	if len(p) < 2 || (p[0] != 'v' && p[0] != 'V') {
		return false
	}
	return !strings.ContainsFunc(p[1:], func(r rune) bool { return r != '.' && !unicode.IsDigit(r) })
}

// The bounds of what a relay keeps of the kinds it saw: at most maxKinds
// kinds (a later one is counted as "other"), each by the second for the
// last keptSeconds seconds.
const (
	maxKinds    = 64
	keptSeconds = 3600
)

// kindCounts counts a relay's requests by kind and by the second (Unix
// time) they began in.
type kindCounts struct {
	mu    sync.Mutex
	kinds map[string]map[int64]int64
}

func (k *kindCounts) count(kind string, at time.Time) {
	sec := at.Unix()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.kinds == nil {
		k.kinds = map[string]map[int64]int64{}
	}
	m := k.kinds[kind]
	if m == nil {
		if len(k.kinds) >= maxKinds {
			k.evict(sec)
		}
		if len(k.kinds) >= maxKinds {
			kind = "other"
			m = k.kinds[kind]
		}
		if m == nil {
			m = map[int64]int64{}
			k.kinds[kind] = m
		}
	}
	m[sec]++
	if len(m) > keptSeconds {
		for s := range m {
			if s <= sec-keptSeconds {
				delete(m, s)
			}
		}
	}
}

// evict forgets the kinds not seen in the last keptSeconds: a relay that
// lives for days keeps room for what its dependency receives now.
func (k *kindCounts) evict(now int64) {
	for kind, m := range k.kinds {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(m)), func(s int64) bool { return s > now-keptSeconds }) {
			delete(k.kinds, kind)
		}
	}
}

// KindCount is how many requests of one kind a relay saw, by the second.
type KindCount struct {
	Kind string `json:"kind"`
	// Seconds maps a second (Unix time) to the requests of the kind that
	// began in it.
	Seconds map[int64]int64 `json:"seconds"`
}

// since are the kinds seen from the second since on, sorted by kind.
func (k *kindCounts) since(since int64) []KindCount {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := []KindCount{}
	for _, kind := range slices.Sorted(maps.Keys(k.kinds)) {
		c := KindCount{Kind: kind, Seconds: map[int64]int64{}}
		for s, n := range k.kinds[kind] {
			if s >= since {
				c.Seconds[s] = n
			}
		}
		if len(c.Seconds) > 0 {
			out = append(out, c)
		}
	}
	return out
}
