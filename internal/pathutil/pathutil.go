// Package pathutil holds what the runner and explore both do to a path.
package pathutil

import "path/filepath"

// Abs is p made absolute, so that two paths to one file compare equal;
// "" stays "", and a path that cannot be made absolute stays as it is.
func Abs(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
