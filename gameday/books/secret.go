package books

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/redact"
)

// A books error reaches run.json, the summary and the reports, so it never
// shows what may be a secret: a URL is shown as redact.URL shows it, a
// net/http error's URL as redact.Error does, and on top of that every
// secret the request or the store's connection string carried (a password,
// a query value, a header's value) is replaced wherever the text repeats
// it: a driver that quotes its connection string, a store whose error
// answer echoes the token it was sent.

// minSecret is the shortest value taken for a secret: shorter ones
// (sslmode=on, limit=50) are not worth hiding, and replacing them would
// garble the rest of a message.
const minSecret = 4

// hidden is an error whose text has its secrets replaced; errors.Is and
// errors.As still see the error it was made from.
type hidden struct {
	err  error
	text string
}

func (h *hidden) Error() string { return h.text }
func (h *hidden) Unwrap() error { return h.err }

// hide is err with a net/http error's URL redacted and every one of
// secrets replaced by redact.Mask; err itself when nothing changes.
func hide(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	err = redact.Error(err)
	text := scrub(err.Error(), secrets)
	if text == err.Error() {
		return err
	}
	return &hidden{err: err, text: text}
}

// scrub replaces each of secrets in s, the longest first (so that a
// secret holding another goes whole).
func scrub(s string, secrets []string) string {
	secrets = slices.Clone(secrets)
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, x := range secrets {
		if len(x) >= minSecret {
			s = strings.ReplaceAll(s, x, redact.Mask)
			if e := url.QueryEscape(x); e != x {
				s = strings.ReplaceAll(s, e, redact.Mask)
			}
		}
	}
	return s
}

// urlSecrets are the parts of a URL that may be secrets: its userinfo
// and its query's values (the raw and the decoded forms).
func urlSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		// Not a URL that parses: it may still end in a query.
		_, q, ok := strings.Cut(raw, "?")
		if !ok {
			return nil
		}
		return querySecrets(q)
	}
	var out []string
	if u.User != nil {
		// A user name beside a password is a name; alone
		// (redis://TOKEN@host), it is likely the secret.
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		} else {
			out = append(out, u.User.Username())
		}
	}
	out = append(out, querySecrets(u.RawQuery)...)
	if u.Fragment != "" {
		out = append(out, u.Fragment, u.EscapedFragment())
	}
	return out
}

// querySecrets are a query string's values, and its bare words.
func querySecrets(q string) []string {
	var out []string
	for _, p := range strings.Split(q, "&") {
		_, v, ok := strings.Cut(p, "=")
		if !ok {
			v = p
		}
		out = append(out, v)
		if d, err := url.QueryUnescape(v); err == nil && d != v {
			out = append(out, d)
		}
	}
	return out
}

// dsnPassword is a password's value in a libpq key=value DSN.
var dsnPassword = regexp.MustCompile(`(?i)\b(?:password|passwd|pwd|sslpassword|sslkey|secret|token)\s*=\s*('(?:[^'\\]|\\.)*'|\S+)`)

// mysqlUser is the userinfo of a Go MySQL DSN (user:pass@tcp(host)/db).
var mysqlUser = regexp.MustCompile(`^[^:@/\s]*:([^@\s]*)@`)

// dsnSecrets are the parts of a store's connection string that may be
// secrets: as a URL (postgres://, redis://), the password values of a
// key=value DSN, the password and the parameters' values of a MySQL one.
func dsnSecrets(dsn string) []string {
	if strings.Contains(dsn, "://") {
		return urlSecrets(dsn)
	}
	var out []string
	for _, m := range dsnPassword.FindAllStringSubmatch(dsn, -1) {
		out = append(out, m[1], strings.Trim(m[1], "'"))
	}
	if m := mysqlUser.FindStringSubmatch(dsn); m != nil {
		out = append(out, m[1])
		if _, q, ok := strings.Cut(dsn, "?"); ok {
			out = append(out, querySecrets(q)...)
		}
	}
	return out
}

// headerSecrets are a request's header values, and the credentials of an
// Authorization's scheme ("Bearer TOKEN": TOKEN too).
func headerSecrets(h http.Header) []string {
	var out []string
	for _, vs := range h {
		for _, v := range vs {
			out = append(out, v)
			if _, cred, ok := strings.Cut(v, " "); ok {
				out = append(out, strings.TrimSpace(cred))
			}
		}
	}
	return out
}

// requestSecrets are what a rendered http query carries that may be
// secret: its URL's userinfo and query values, and its headers' values.
func requestSecrets(rawURL string, h http.Header) []string {
	return append(urlSecrets(rawURL), headerSecrets(h)...)
}

// storeSecrets are the parts of a store's connection that may be secrets:
// its DSN's or URL's, and its headers' values.
func storeSecrets(st *system.Store) []string {
	switch st.Kind() {
	case "postgres":
		return dsnSecrets(st.Postgres)
	case "mysql":
		return dsnSecrets(st.MySQL)
	case "redis":
		return dsnSecrets(st.Redis)
	case "http":
		return requestSecrets(st.HTTP, st.Header())
	}
	return nil
}

// hiding replaces *err by what may be shown of it: neither q's store's
// secrets nor those its request carries.
func (r *Reader) hiding(q *system.Query, err *error) {
	if *err == nil {
		return
	}
	var secrets []string
	if st := r.sys.Stores[q.Store]; st != nil {
		secrets = storeSecrets(st)
	}
	if q.Kind() == "http" {
		rq := r.sys.Render(q, r.vals)
		secrets = append(secrets, requestSecrets(rq.URL, rq.Headers)...)
	}
	*err = hide(*err, secrets)
}
