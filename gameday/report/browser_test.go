//go:build unix

package report

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The report is opened in a real browser, Debian's chromium, headless.
// One chromium run per page does three things at once:
//
//   - --screenshot writes report.png next to report.html, and the test
//     checks that the chart colours are really painted on it;
//   - --dump-dom prints the DOM after loading, and the test checks that
//     every chart's <svg> is there with its title, description and path
//     data;
//   - --enable-logging=stderr --v=1 logs every message of the page's
//     console (lines with ":CONSOLE") and every file the page loads
//     ("FileURLLoader::Start: URL"). The page has no script, so the
//     console errors it can have are the browser's own: SVG attributes it
//     cannot parse (a NaN coordinate, a negative width) and resources it
//     cannot load. The test fails on any console line, and on any file
//     loaded besides the page itself. TestChromiumCatchesErrors proves
//     on a page broken on purpose that these checks see what they must,
//     so that a chromium whose log format changed fails loudly instead of
//     passing blind.
//
// Network requests cannot be told apart from chromium's own background
// traffic in that log; TestSelfContained checks statically that the page
// refers to nothing outside itself.
//
// When GAMEDAY_ARTIFACTS names a directory, each page, its junit.xml and
// its screenshot are also copied to GAMEDAY_ARTIFACTS/report-<fixture>/,
// for CI to keep.
//
// When chromium is not installed the test fails under CI=true (CI must
// run it) and is skipped elsewhere.

const chromiumTimeout = 60 * time.Second

// chromium returns the browser's path, or fails or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("GAMEDAY_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const hint = "chromium is not installed: run scripts/setup.sh, or apt-get install chromium fonts-dejavu-core (or set GAMEDAY_CHROMIUM to a Chromium binary)"
	if os.Getenv("CI") == "true" {
		t.Fatal(hint)
	}
	t.Skip(hint)
	return ""
}

// browserRun is what chromium made of a page.
type browserRun struct {
	dom       string
	console   []string // console messages, as logged
	fileLoads []string // file:// URLs the page loaded
	stderr    string
}

var (
	consoleLine = regexp.MustCompile(`:CONSOLE(?:\(\d+\))?:?\d*\] (.*)`)
	fileLoad    = regexp.MustCompile(`FileURLLoader::Start: (\S+)`)
)

// openInChromium loads page in headless chromium, saving a screenshot to
// shot, and returns its DOM and log.
func openInChromium(t *testing.T, browser, page, shot string) browserRun {
	t.Helper()
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	pageURL := (&url.URL{Scheme: "file", Path: abs}).String()
	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser,
		"--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--disable-background-networking", "--disable-component-update",
		"--user-data-dir="+t.TempDir(),
		"--enable-logging=stderr", "--v=1",
		"--window-size=1280,2400", "--screenshot="+shot, "--dump-dom",
		pageURL)
	// Chromium starts helper processes: on timeout, kill them all, and
	// do not wait for ever on a pipe a stray helper holds open.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("chromium did not finish within %v: %s", chromiumTimeout, tail(stderr.String(), 20))
	}
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, tail(stderr.String(), 20))
	}
	run := browserRun{dom: stdout.String(), stderr: stderr.String()}
	sc := bufio.NewScanner(&stderr)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if m := consoleLine.FindStringSubmatch(line); m != nil {
			run.console = append(run.console, m[1])
		}
		if m := fileLoad.FindStringSubmatch(line); m != nil && m[1] != pageURL {
			run.fileLoads = append(run.fileLoads, m[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read chromium's log: %v", err)
	}
	if !strings.Contains(run.stderr, "FileURLLoader::Start: "+pageURL) {
		t.Fatalf("chromium's log does not show it loading %s: the log checks would be blind (has its format changed?)\n%s", pageURL, tail(run.stderr, 20))
	}
	return run
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestChromiumCatchesErrors calibrates the checks on a page broken on
// purpose: an SVG path with NaN in it, a negative width and an image
// that is not there.
func TestChromiumCatchesErrors(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "broken.html")
	html := `<!DOCTYPE html><html><head><meta charset="utf-8"><title>broken</title></head><body>` +
		`<svg viewBox="0 0 10 10"><path d="M0 0L NaN 5"/><rect width="-3" height="2"/></svg>` +
		`<img alt="" src="missing.png"></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	run := openInChromium(t, browser, page, filepath.Join(dir, "broken.png"))
	joined := strings.Join(run.console, "\n")
	for _, want := range []string{"<path> attribute d", "<rect> attribute width"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the console check missed %q; console lines: %q", want, run.console)
		}
	}
	if len(run.fileLoads) != 1 || !strings.HasSuffix(run.fileLoads[0], "/missing.png") {
		t.Errorf("the load check saw %q, want the missing image", run.fileLoads)
	}
}

// chartSVG finds the <svg> elements of the charts in a DOM.
var (
	svgElement = regexp.MustCompile(`(?s)<svg\b[^>]*\bid="(chart-[a-z]+)"[^>]*>(.*?)</svg>`)
	pathData   = regexp.MustCompile(`<path\b[^>]*\bd="([^"]*)"`)
	barRect    = regexp.MustCompile(`<rect\b[^>]*\bwidth="([0-9.]+)" height="([0-9.]+)"`)
	titleText  = regexp.MustCompile(`<title\b[^>]*>([^<]+)</title>`)
	descText   = regexp.MustCompile(`<desc\b[^>]*>([^<]+)</desc>`)
	number     = regexp.MustCompile(`-?[0-9]+(?:\.[0-9]+)?`)
)

func TestReportInChromium(t *testing.T) {
	browser := chromium(t)
	for _, name := range []string{"pass", "fail", "inconclusive"} {
		t.Run(name, func(t *testing.T) {
			r := readFixture(t, name)
			dir := filepath.Join(t.TempDir(), "run-"+name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := Write(dir, r); err != nil {
				t.Fatal(err)
			}
			page, shot := filepath.Join(dir, HTMLFile), filepath.Join(dir, "report.png")
			defer saveArtifacts(t, name, dir) // whatever happens below
			run := openInChromium(t, browser, page, shot)
			t.Logf("screenshot: %s", shot)

			if len(run.console) > 0 {
				t.Errorf("chromium's console has %d messages, want none:\n%s", len(run.console), strings.Join(run.console, "\n"))
			}
			if len(run.fileLoads) > 0 {
				t.Errorf("the page loaded other files: %q", run.fileLoads)
			}
			checkDOM(t, run.dom, r.Series.Seconds)
			checkScreenshot(t, shot, name)
		})
	}
}

// checkDOM checks the three charts are in the DOM chromium built, each
// with a title, a description, and drawn path data.
func checkDOM(t *testing.T, dom string, seconds int) {
	t.Helper()
	if !strings.Contains(dom, "</html>") {
		t.Fatalf("--dump-dom printed no document:\n%s", tail(dom, 5))
	}
	found := map[string]string{}
	for _, m := range svgElement.FindAllStringSubmatch(dom, -1) {
		found[m[1]] = m[2]
	}
	for _, id := range []string{"chart-traffic", "chart-latency", "chart-breakers"} {
		body, ok := found[id]
		if !ok {
			t.Errorf("no <svg id=%q> in the DOM", id)
			continue
		}
		if m := titleText.FindStringSubmatch(body); m == nil || strings.TrimSpace(m[1]) == "" {
			t.Errorf("%s has no <title>", id)
		}
		if m := descText.FindStringSubmatch(body); m == nil || len(m[1]) < 20 {
			t.Errorf("%s has no text alternative in <desc>", id)
		}
		drawn := 0
		for _, p := range pathData.FindAllStringSubmatch(body, -1) {
			if len(number.FindAllString(p[1], -1)) >= 4 {
				drawn++
			}
		}
		if drawn == 0 {
			t.Errorf("%s has no path with data", id)
		}
		filled := 0
		for _, rm := range barRect.FindAllStringSubmatch(body, -1) {
			w, _ := strconv.ParseFloat(rm[1], 64)
			h, _ := strconv.ParseFloat(rm[2], 64)
			if w > 0 && h > 0 {
				filled++
			}
		}
		if id == "chart-traffic" && filled < seconds/2 {
			t.Errorf("%s has %d bars for %d seconds", id, filled, seconds)
		}
		if id == "chart-breakers" && filled == 0 {
			t.Errorf("%s has no band", id)
		}
	}
}

// checkScreenshot checks the charts were painted: enough pixels of the
// colour of confirmed checkouts (the bars), of the p99 latency line (a
// colour nothing else uses), and of the closed breaker band.
func checkScreenshot(t *testing.T, shot, name string) {
	t.Helper()
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 2400 {
		t.Errorf("screenshot is %v, want 1280×2400", b.Size())
	}
	for _, c := range []struct {
		what    string
		r, g, b uint8
		min     int
	}{
		{"confirmed bars (#009E73)", 0x00, 0x9E, 0x73, 2000},
		{"p99 line (#B8400A)", 0xB8, 0x40, 0x0A, 200},
		{"closed breaker band (#b9e4cf)", 0xb9, 0xe4, 0xcf, 2000},
	} {
		if n := countColour(img, c.r, c.g, c.b); n < c.min {
			t.Errorf("%s: %d pixels of the %s, want at least %d: the chart is not drawn", name, n, c.what, c.min)
		}
	}
}

// countColour counts pixels within a small distance of a colour (the
// browser's rendering may round a channel).
func countColour(img image.Image, r, g, b uint8) int {
	near := func(a uint32, want uint8) bool {
		d := int(a>>8) - int(want)
		return d >= -6 && d <= 6
	}
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			if near(pr, r) && near(pg, g) && near(pb, b) {
				n++
			}
		}
	}
	return n
}

// saveArtifacts copies the rendered run directory's reports to
// $GAMEDAY_ARTIFACTS/report-<name>/ when that is set.
func saveArtifacts(t *testing.T, name, dir string) {
	t.Helper()
	root := os.Getenv("GAMEDAY_ARTIFACTS")
	if root == "" {
		return
	}
	dst := filepath.Join(root, "report-"+name)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatalf("GAMEDAY_ARTIFACTS: %v", err)
	}
	for _, file := range []string{HTMLFile, JUnitFile, "report.png"} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, file), data, 0o644); err != nil {
			t.Fatalf("GAMEDAY_ARTIFACTS: %v", err)
		}
	}
	t.Logf("artifacts: %s", dst)
}
