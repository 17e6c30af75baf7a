package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBrokenDriverIsNeverAPass runs a driver that exits at once. The cell
// is a harness error with no verdict, and no output shows it as a pass:
// the progress line, the table, summary.json, junit.xml and the HTML.
func TestBrokenDriverIsNeverAPass(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runCLI("run", "--scenario", "baseline", "--lock-driver", `bad=sh -c "exit 3"`, "--lock", "bad",
		"--duration", "300ms", "--seed", "3", "--out", out)
	if code != exitHarness {
		t.Fatalf("exit %d, want %d (harness error)\nstdout:\n%s\nstderr:\n%s", code, exitHarness, stdout, stderr)
	}
	// A driver lock no scenario expects anything of is either in both
	// groups: reported, not gated.
	if !strings.Contains(stderr, "[1/1] baseline/bad: safety - (either), liveness - (either): error: ") {
		t.Errorf("progress line shows a verdict:\n%s", stderr)
	}
	if !regexp.MustCompile(`(?m)^baseline +bad +- \(either\) +- \(either\) +error +- +`).MatchString(stdout) {
		t.Errorf("table row shows a verdict:\n%s", stdout)
	}
	var sum struct {
		Cells []map[string]any `json:"cells"`
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil || len(sum.Cells) != 1 {
		t.Fatalf("summary.json: %v, %d cells", err, len(sum.Cells))
	}
	if c := sum.Cells[0]; c["outcome"] != "error" || c["verdict"] != nil {
		t.Errorf("summary.json cell: outcome %v, verdict %v; want error and no verdict", c["outcome"], c["verdict"])
	}
	validate(t, compileSchema(t, "summary.v2.json"), "summary.json", b)
	// A "pass" anywhere in junit.xml; a verdict or status "pass" in the
	// HTML (its style sheet and legend name the colour of a pass).
	for f, pass := range map[string]*regexp.Regexp{"junit.xml": regexp.MustCompile(`\bpass\b`),
		"index.html": regexp.MustCompile(`>pass<`), filepath.Join("cells", "baseline--bad.html"): regexp.MustCompile(`>pass<`)} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if pass.Match(b) {
			t.Errorf("%s says pass:\n%s", f, b)
		}
	}
}
