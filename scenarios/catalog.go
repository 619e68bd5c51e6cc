package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// catalog holds the built-in scenarios, one file each, named after the
// scenario.
//
//go:embed catalog/*.yaml catalog/recordings
var catalog embed.FS

// ErrNotInCatalogue is wrapped by Lookup's error for a name that is
// neither in the catalogue nor a file path.
var ErrNotInCatalogue = errors.New("no such scenario in the catalogue")

// Catalogue parses and returns every built-in scenario, sorted by name.
// Each call returns fresh copies, which the caller may change. File is
// "catalogue:NAME".
func Catalogue() ([]*Scenario, error) {
	entries, err := fs.Glob(catalog, "catalog/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("list catalogue: %w", err)
	}
	out := make([]*Scenario, 0, len(entries))
	for _, e := range entries {
		s, err := parseBuiltin(e)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *Scenario) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// CatalogueNames returns the names of the built-in scenarios, sorted.
func CatalogueNames() []string {
	entries, _ := fs.Glob(catalog, "catalog/*.yaml") // the pattern is valid
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = strings.TrimSuffix(path.Base(e), ".yaml")
	}
	slices.Sort(names)
	return names
}

// parseBuiltin parses one embedded file and checks that it is named after
// its scenario.
func parseBuiltin(file string) (*Scenario, error) {
	data, err := catalog.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read catalogue: %w", err)
	}
	s, err := parse(file, data, fsOpener(catalog, path.Dir(file)))
	if err != nil {
		return nil, fmt.Errorf("parse catalogue: %w", err)
	}
	if want := strings.TrimSuffix(path.Base(file), ".yaml"); s.Name != want {
		return nil, fmt.Errorf("parse catalogue: %s holds scenario %q, want %q", file, s.Name, want)
	}
	s.File = "catalogue:" + s.Name
	return s, nil
}

// IsPath reports whether Lookup reads nameOrPath as a file path rather than
// a catalogue name: it contains a path separator or ends in .yaml or .yml.
func IsPath(nameOrPath string) bool {
	return strings.ContainsRune(nameOrPath, '/') || strings.ContainsRune(nameOrPath, os.PathSeparator) ||
		strings.HasSuffix(nameOrPath, ".yaml") || strings.HasSuffix(nameOrPath, ".yml")
}

// Lookup returns a parsed, validated scenario: the file at nameOrPath when
// [IsPath] says it is a path (see [LoadFile]), otherwise the built-in scenario
// of that name. A name not in the catalogue gives an error wrapping
// ErrNotInCatalogue that lists the known names.
func Lookup(nameOrPath string) (*Scenario, error) {
	if IsPath(nameOrPath) {
		return LoadFile(nameOrPath)
	}
	names := CatalogueNames()
	if !slices.Contains(names, nameOrPath) {
		return nil, fmt.Errorf("look up scenario %q: %w (known: %s; or give a path to a .yaml file)", nameOrPath, ErrNotInCatalogue, strings.Join(names, ", "))
	}
	return parseBuiltin("catalog/" + nameOrPath + ".yaml")
}

// Summary is the first non-blank line of the description, trimmed: what
// "gameday list" shows.
func (s *Scenario) Summary() string {
	for line := range strings.Lines(s.Description) {
		if l := strings.TrimSpace(line); l != "" {
			return l
		}
	}
	return ""
}
