// Package redact is the one place that decides how a URL, a command, a
// header or an error that carries one is shown in messages, run.json, the
// summary and the reports: the parts that may hold a secret are replaced,
// what locates the thing (scheme, host, path, program, flag names) is kept.
//
// A URL keeps its scheme, host and path; its userinfo becomes "xxxxx", each
// query value "xxxxx" (the names stay: "?api_key=xxxxx"), and its fragment
// goes. A URL that does not parse could be anything, a secret included, and
// is not shown at all. A command keeps its program and every argument
// except values: an argument that is a URL or a DSN is redacted as one, a
// "--flag=value" or "NAME=value" whose name suggests a secret has its value
// replaced, and so does the argument that follows such a flag on its own.
// A header keeps its name; its value is replaced.
package redact

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces every value that is not shown.
const Mask = "xxxxx"

// URL is raw as a message may show it.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<a URL that does not parse>"
	}
	return parsed(u)
}

func parsed(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User(Mask)
	}
	if c.RawQuery != "" {
		c.RawQuery = query(c.RawQuery)
	}
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// query keeps each name of a query string and replaces its value.
func query(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		if name, _, ok := strings.Cut(p, "="); ok {
			parts[i] = name + "=" + Mask
		} else if p != "" {
			// A bare word may be a token (?sk_live_...): not shown.
			parts[i] = Mask
		}
	}
	return strings.Join(parts, "&")
}

// secretName matches the names of flags, variables and DSN keys whose
// values are secrets.
var secretName = regexp.MustCompile(`(?i)(pass|pwd|secret|token|key|auth|cred|cookie|session|signature|private)`)

// dsnPair is one key=value of a libpq-style DSN ("host=db password=x").
var dsnPair = regexp.MustCompile(`(?i)\b(password|passwd|pwd|sslpassword|sslkey|secret|token)\s*=\s*('(?:[^'\\]|\\.)*'|\S+)`)

// mysqlDSN is the userinfo of a Go MySQL DSN ("user:pass@tcp(host)/db").
var mysqlDSN = regexp.MustCompile(`^([^:@/\s]*):[^@\s]*@`)

// DSN is a database connection string as a message may show it: a URL
// (postgres://, mysql://, redis://) redacted as a URL, a libpq key=value
// string with its password values replaced, a Go MySQL DSN
// (user:pass@tcp(host)/db) with its password replaced.
func DSN(s string) string {
	if strings.Contains(s, "://") {
		return URL(s)
	}
	s = dsnPair.ReplaceAllString(s, "${1}="+Mask)
	if m := mysqlDSN.FindStringSubmatchIndex(s); m != nil {
		s = s[:m[2]] + s[m[2]:m[3]] + ":" + Mask + "@" + s[m[1]:]
	}
	return s
}

// Header is a header as a message may show it: its name, and no value.
func Header(name, _ string) string { return name + ": " + Mask }

// Command is argv as a message may show it, joined with spaces.
func Command(argv []string) string {
	out := make([]string, 0, len(argv))
	hide := false // the previous argument was a secret's flag
	for i, a := range argv {
		switch {
		case i == 0:
			out = append(out, a)
		case hide:
			out = append(out, Mask)
			hide = false
		default:
			out = append(out, arg(a))
			name := strings.TrimLeft(a, "-")
			hide = strings.HasPrefix(a, "-") && !strings.Contains(a, "=") && secretName.MatchString(name)
		}
	}
	return strings.Join(out, " ")
}

// arg is one argument of a command, not a program.
func arg(a string) string {
	if strings.Contains(a, "://") {
		if i := strings.Index(a, "="); i > 0 && i < strings.Index(a, "://") {
			return a[:i+1] + URL(a[i+1:]) // --url=https://...
		}
		return URL(a)
	}
	if name, _, ok := strings.Cut(a, "="); ok && secretName.MatchString(name) {
		return name + "=" + Mask
	}
	if mysqlDSN.MatchString(a) && strings.Contains(a, "(") {
		return DSN(a)
	}
	if dsnPair.MatchString(a) {
		return DSN(a)
	}
	return a
}

// Error is err with the URL a net/http error carries (Get "URL": ...)
// redacted, the rest of its text as it was. It keeps err's chain for
// errors.Is and errors.As: the *url.Error is copied with its URL replaced.
func Error(err error) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	shown := URL(ue.URL)
	if shown == ue.URL {
		return err
	}
	return &redacted{err: err, text: strings.ReplaceAll(err.Error(), ue.URL, shown)}
}

type redacted struct {
	err  error
	text string
}

func (r *redacted) Error() string { return r.text }
func (r *redacted) Unwrap() error { return r.err }
