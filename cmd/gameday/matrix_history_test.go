package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// gitIn runs git in the current directory with a fixed author and clock.
func gitIn(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=sre", "GIT_AUTHOR_EMAIL=sre@example.org", "GIT_COMMITTER_NAME=sre",
		"GIT_COMMITTER_EMAIL=sre@example.org", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func verdictMatrix(verdict string, day int) string {
	return fmt.Sprintf(`version: 1
rows:
  - dependency: payment
    failure: latency
    cadence: weekly
    scenario: payment-latency
    runbook: https://wiki.example/runbooks/payment-latency
    last: {at: 2026-11-%02dT02:00:00Z, verdict: %s}
`, day, verdict)
}

// matrix diff, history and check on a repository of the test's: a branch
// whose drill failed is worse than main (exit 1, Markdown for the pull
// request); its history flaps, and check says so though the last run
// passed.
func TestMatrixDiffHistoryCheck(t *testing.T) {
	inMatrixDir(t)
	gitIn(t, "init", "-q", "-b", "main")
	writeMatrix(t, "resiliency-matrix.yaml", verdictMatrix("pass", 20))
	gitIn(t, "add", "resiliency-matrix.yaml")
	gitIn(t, "commit", "-q", "--no-gpg-sign", "-m", "matrix")
	gitIn(t, "checkout", "-q", "-b", "work")
	writeMatrix(t, "resiliency-matrix.yaml", verdictMatrix("fail", 21))

	var out, errOut bytes.Buffer
	err := matrixCmd([]string{"diff", "-format", "markdown"}, &out, &errOut)
	if code := matrixExit(err); code != exitFailed || !strings.Contains(out.String(), "| payment/latency | **worse** | verdict pass → fail |") ||
		!strings.Contains(out.String(), "[runbook](https://wiki.example/runbooks/payment-latency)") {
		t.Fatalf("diff against the merge base: exit %d (%v)\n%s%s", code, err, out.String(), errOut.String())
	}
	out.Reset()
	if code := matrixExit(matrixCmd([]string{"diff", "main"}, &out, &errOut)); code != exitFailed || !strings.Contains(out.String(), "worse") {
		t.Fatalf("diff against main: exit %d\n%s", code, out.String())
	}
	out.Reset()
	if code := matrixExit(matrixCmd([]string{"diff", "no-such-branch"}, &out, &errOut)); code != exitUsage {
		t.Errorf("diff against a branch that is not there: exit %d", code)
	}

	// pass, fail, pass, fail, pass: four changes in five runs.
	for i, v := range []string{"fail", "pass", "fail", "pass"} {
		writeMatrix(t, "resiliency-matrix.yaml", verdictMatrix(v, 21+i))
		gitIn(t, "commit", "-q", "--no-gpg-sign", "-am", "drill "+v)
	}
	out.Reset()
	if code := matrixExit(matrixCmd([]string{"history"}, &out, &errOut)); code != exitOK ||
		!strings.Contains(out.String(), "PFPFP") || !strings.Contains(out.String(), "yes: 4 changes in 5 runs") {
		t.Fatalf("history: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := matrixExit(matrixCmd([]string{"history", "payment/down"}, &out, &errOut)); code != exitUsage {
		t.Errorf("history of a row that is not there: exit %d", code)
	}
	out.Reset()
	if code := matrixExit(matrixCmd([]string{"check"}, &out, &errOut)); code != exitFailed || !strings.Contains(out.String(), "row payment/latency (payment-latency): flapping") {
		t.Fatalf("check of a flapping row whose last run passed: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	// show says it too, in the row's check column and under the table.
	for _, format := range []string{"table", "markdown"} {
		out.Reset()
		if code := matrixExit(matrixCmd([]string{"show", "-format", format}, &out, &errOut)); code != exitOK ||
			!regexp.MustCompile(`payment/latency.*pass.*flapping`).MatchString(out.String()) || !strings.Contains(out.String(), "its verdict changed 4 times in its last 5 runs") {
			t.Fatalf("show (%s) of a flapping row whose last run passed: exit %d\n%s%s", format, code, out.String(), errOut.String())
		}
	}
}
