package env

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"strings"
)

// gamedayMain is the main package of the gameday executable, as its build
// information names it (a fork's module path may differ before it).
const gamedayMain = "/cmd/gameday"

// ResolveBinary returns the gameday executable a local environment (or a
// drill's local load workers) starts its children from: bin, or, when bin
// is "", this process's own executable. Either must be a gameday
// executable, which its build information says; a program that embeds
// gameday as a library (a team's test suite, its own tool) is not one, and
// started as "serve checkout" it would not serve a checkout. The error
// says so and what to set.
func ResolveBinary(bin string) (string, error) {
	self := bin == ""
	if self {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("find the gameday executable (Binary is not set): %w", err)
		}
		bin = exe
	}
	info, err := buildinfo.ReadFile(bin)
	if err == nil && strings.HasSuffix(info.Path, gamedayMain) {
		return bin, nil
	}
	what := "Binary " + bin
	if self {
		what = "Binary is not set, and this process's executable, " + bin + ","
	}
	why := "is not the gameday executable"
	switch {
	case err != nil:
		why += fmt.Sprintf(" (%v)", err)
	case info.Path != "":
		why += " (it is " + info.Path + ")"
	}
	return "", fmt.Errorf("%s %s: the local environment starts the checkout and the payment stand-in, and the load workers, as gameday's own commands; set Binary to a gameday executable (go build -o gameday ./cmd/gameday)", what, why)
}
