package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// helpCommands are the commands the top-level usage lists, each as its
// words ("run", "matrix check", "serve checkout"): a line "  gameday WORD
// [WORD] ...  description" names one, its words being the lowercase ones
// before the first argument or flag. A command added to the usage is covered here
// without a change to this test.
func helpCommands(t *testing.T) [][]string {
	t.Helper()
	word := regexp.MustCompile(`^[a-z][a-z-]*$`)
	var cmds [][]string
	for _, line := range strings.Split(usage, "\n") {
		rest, ok := strings.CutPrefix(line, "  gameday ")
		if !ok {
			continue
		}
		// Two spaces part the synopsis from its description.
		synopsis, _, _ := strings.Cut(strings.TrimSpace(rest), "  ")
		var words []string
		for _, f := range strings.Fields(synopsis) {
			if !word.MatchString(f) {
				break
			}
			words = append(words, f)
		}
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
	}
	if len(cmds) < 16 {
		t.Fatalf("found %d commands in the usage, want at least 16: %q", len(cmds), cmds)
	}
	return cmds
}

// docsText is README.md and docs/*.md, joined.
func docsText(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	files = append(files, filepath.Join("..", "..", "README.md"))
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String()
}

// flagLine is a flag as flag.PrintDefaults prints it: "  -name ...".
var flagLine = regexp.MustCompile(`(?m)^  -([A-Za-z0-9][A-Za-z0-9_.-]*)`)

// documented reports whether docs mention -name or --name as a whole
// word: not -payment-timeout for -timeout, nor -timeouts.
func documented(docs, name string) bool {
	re := regexp.MustCompile(`(?:^|[^A-Za-z0-9_-])--?` + regexp.QuoteMeta(name) + `(?:$|[^A-Za-z0-9_-])`)
	return re.MatchString(docs)
}

// Every command's -h says how to call it, what it does and its flags,
// exits 0, and every flag it prints is documented in README.md or
// docs/*.md.
func TestEveryCommandHelp(t *testing.T) {
	docs := docsText(t)
	for _, words := range helpCommands(t) {
		name := strings.Join(words, " ")
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append(append([]string{}, words...), "-h"), &stdout, &stderr)
			out := stdout.String() + stderr.String()
			if code != exitOK {
				t.Fatalf("gameday %s -h: exit %d, want 0; output:\n%s", name, code, out)
			}
			if !strings.HasPrefix(out, "usage: gameday") {
				t.Errorf("gameday %s -h: output does not start with \"usage: gameday\":\n%s", name, out)
			}
			for _, m := range flagLine.FindAllStringSubmatch(out, -1) {
				if !documented(docs, m[1]) {
					t.Errorf("gameday %s: flag -%s is in -h but not in README.md or docs/*.md", name, m[1])
				}
			}
		})
	}
}

// The flag parser in the test finds what PrintDefaults prints, and the
// docs check wants the whole flag.
func TestHelpTestHelpers(t *testing.T) {
	out := "flags:\n  -env string\n    \tenvironment\n  -quiet\n    \tno progress\n  -x\tshort\n"
	var got []string
	for _, m := range flagLine.FindAllStringSubmatch(out, -1) {
		got = append(got, m[1])
	}
	if strings.Join(got, ",") != "env,quiet,x" {
		t.Errorf("flags parsed %q, want env, quiet, x", got)
	}
	for _, c := range []struct {
		docs, name string
		want       bool
	}{
		{"`-timeout 2s`", "timeout", true},            // a flag with its value
		{"`--timeout`", "timeout", true},              // two dashes
		{"-payment-timeout 2s", "timeout", false},     // another flag's tail
		{"`-timeouts`", "timeout", false},             // a longer flag
		{"payment-timeout", "payment-timeout", false}, // no dash: not a flag
	} {
		if got := documented(c.docs, c.name); got != c.want {
			t.Errorf("documented(%q, %q) = %v, want %v", c.docs, c.name, got, c.want)
		}
	}
}

// "gameday serve" alone, with -h or an unknown service, names the three
// services; -h exits 0, the others 2.
func TestServeUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"serve", "-h"}, exitOK, ""},
		{[]string{"serve", "-help"}, exitOK, ""},
		{[]string{"serve", "--help"}, exitOK, ""},
		{[]string{"serve"}, exitUsage, "which service"},
		{[]string{"serve", "cart"}, exitUsage, `unknown service "cart"`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(c.args, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code != c.code {
			t.Errorf("gameday %s: exit %d, want %d", strings.Join(c.args, " "), code, c.code)
		}
		if !strings.HasPrefix(out, "usage: gameday serve SERVICE") || !strings.Contains(out, c.msg) {
			t.Errorf("gameday %s: output\n%s\nwant the serve synopsis and %q", strings.Join(c.args, " "), out, c.msg)
		}
		for _, svc := range []string{"checkout", "payment", "catalog", "router", "toxiproxy"} {
			if !strings.Contains(out, "  "+svc+" ") {
				t.Errorf("gameday %s: the synopsis does not list %s:\n%s", strings.Join(c.args, " "), svc, out)
			}
		}
	}
}
