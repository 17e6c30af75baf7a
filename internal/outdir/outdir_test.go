package outdir_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/internal/outdir"
	"github.com/lockchaos/lockchaos/reports"
)

func mkfile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mklink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func regular(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular()
}

// The --out rule: new, empty, or earlier lockchaos output (the marker, or
// a summary.json of before it); anything else, or a link to it, refused.
func TestOutMustBeNewEmptyOrOurs(t *testing.T) {
	old := t.TempDir()
	if _, err := reports.WriteJSON(old, &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaos"}); err != nil {
		t.Fatal(err)
	}
	marked := t.TempDir()
	mkfile(t, filepath.Join(marked, outdir.Marker), "")
	mkfile(t, filepath.Join(marked, "notes.txt"), "mine")
	emptyLinked := filepath.Join(t.TempDir(), "out")
	mklink(t, t.TempDir(), emptyLinked)
	for _, dir := range []string{filepath.Join(t.TempDir(), "new", "out"), t.TempDir(), old, marked, emptyLinked} {
		release, err := outdir.Claim(dir)
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		release()
		if !regular(filepath.Join(dir, outdir.Marker)) {
			t.Errorf("%s: no %s left for the next run", dir, outdir.Marker)
		}
	}
	etc := t.TempDir()
	mkfile(t, filepath.Join(etc, "passwd"), "root:x:0:0\n")
	etcLink := filepath.Join(t.TempDir(), "out")
	mklink(t, etc, etcLink)
	notOurs := t.TempDir()
	mkfile(t, filepath.Join(notOurs, "summary.json"), `{"tool": "someone-else"}`)
	for _, c := range []struct{ dir, says string }{
		{etc, etc + ": not lockchaos output: it holds 1 entry (passwd)"},
		{etcLink, etcLink + " (a link to " + etc + "): not lockchaos output"},
		{notOurs, "choose another --out"},
	} {
		_, err := outdir.Claim(c.dir)
		if !errors.Is(err, outdir.ErrForeign) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v; want it refused, saying %q", c.dir, err, c.says)
		}
	}
	if got, _ := os.ReadDir(etc); len(got) != 1 {
		t.Errorf("wrote into a refused directory: %v", got)
	}
}
