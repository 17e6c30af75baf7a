package splice_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lockchaos/lockchaos/internal/splice"
)

// Into replaces only what lies between the markers; a file without both
// (or with them the wrong way round) is ErrNoMarkers, for Check and Into
// alike, and is left as it was.
func TestSplice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a\n<!-- s -->\nold\n<!-- e -->\nb\n")
	if err := splice.Check(path, "<!-- s -->", "<!-- e -->"); err != nil {
		t.Fatal(err)
	}
	if err := splice.Into(path, "<!-- s -->", "<!-- e -->", "new\n"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "a\n<!-- s -->\nnew\n<!-- e -->\nb\n" {
		t.Errorf("spliced: %q", b)
	}
	write("<!-- e -->\n<!-- s -->\n")
	if err := splice.Into(path, "<!-- s -->", "<!-- e -->", "x"); !errors.Is(err, splice.ErrNoMarkers) {
		t.Errorf("markers the wrong way round: %v", err)
	}
	if err := splice.Check(path, "<!-- s -->", "<!-- e -->"); !errors.Is(err, splice.ErrNoMarkers) {
		t.Errorf("Check: %v", err)
	}
}
