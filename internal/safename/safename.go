// Package safename is the one rule for names that become path elements (a
// cell's folder is OUT/SCENARIO/LOCK, a driver's stderr file is named after
// its lock) and the check that a path built from them stays under its root.
package safename

import (
	"path/filepath"
	"regexp"
	"strings"
)

// Rule says in words what Valid accepts, for error messages.
const Rule = `letters, digits, ".", "_" and "-", starting with a letter or digit, at most 64 characters, no ".."`

var pattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Valid reports whether name is safe as one path element on every system:
// no separator, no "." or "..", nothing a shell or a URL treats specially.
func Valid(name string) bool {
	return pattern.MatchString(name) && !strings.Contains(name, "..")
}

// Within reports whether path is root or lies below it, lexically (after
// cleaning both; symbolic links are not followed).
func Within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && filepath.IsLocal(rel)
}
