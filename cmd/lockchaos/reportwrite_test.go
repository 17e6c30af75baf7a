package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/internal/outdir"
)

// A report that cannot be written (a directory where summary.json goes)
// is a harness error, and the run does not say it wrote it.
func TestRunWhoseSummaryCannotBeWrittenIsNotAPass(t *testing.T) {
	out := t.TempDir()
	mkfile(t, filepath.Join(out, outdir.Marker), "")
	mkfile(t, filepath.Join(out, "summary.json", "in-the-way"), "")
	code, stdout, stderr := oneCell(out)
	if code != exitHarness {
		t.Errorf("exit %d, want %d\n%s\n%s", code, exitHarness, stdout, stderr)
	}
	if strings.Contains(stdout, filepath.Join(out, "summary.json")) {
		t.Errorf("says it wrote summary.json:\n%s", stdout)
	}
	if !strings.Contains(stderr, "writing reports") || !strings.Contains(stdout, filepath.Join(out, "junit.xml")) {
		t.Errorf("want the failure on stderr and the files written on stdout\n%s\n%s", stdout, stderr)
	}
}
