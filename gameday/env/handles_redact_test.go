package env

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/system"
)

// A handle's failed command is shown with its secrets masked, in its
// argv and in what it printed: the error reaches run.json, the summary
// and the reports. The program and the flags' names stay, so the user
// can tell which command failed.
func TestHandleErrorsHideSecrets(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{"s3cret", "hunter2", "pw@", "k3y"}
	kill := []string{sh, "-c", `echo "refused: token $2 not valid" >&2; exit 3`, "sh", "--token", "s3cret",
		"--password=hunter2", "https://user:pw@db.example/x?api_key=k3y"}
	h, err := newHandle(context.Background(), "cache", &system.Process{
		Command: &system.Commands{Kill: kill},
		Timeout: system.Duration(10 * time.Second),
	}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	err = h.Kill()
	if err == nil {
		t.Fatal("a command that exits 3 did not fail")
	}
	msg := err.Error()
	for _, s := range secrets {
		if strings.Contains(msg, s) {
			t.Errorf("the error shows %q: %s", s, msg)
		}
	}
	for _, want := range []string{sh, "--token", "--password=", "db.example", "exit status 3", "refused: token"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q: %s", want, msg)
		}
	}
}
