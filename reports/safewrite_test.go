package reports_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lockchaos/lockchaos/internal/safefile"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/verify"
)

// An output directory (protected, as the CLI's --out is) with links
// planted in it: at the reports' own names they are replaced, never
// written through; where the cell pages' folder goes, refused.
func TestReportsNeverWriteThroughAPlantedLink(t *testing.T) {
	dir := t.TempDir()
	release, err := safefile.Protect(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"summary.json", "junit.xml", "index.html"} {
		if err := os.Symlink(victim, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	s := savedRun(t, dir)
	if _, err := reports.WriteJSON(dir, s); err != nil {
		t.Fatal(err)
	}
	if _, err := reports.WriteJUnit(dir, s); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(dir, "cells")); err != nil {
		t.Fatal(err)
	}
	if _, err := reports.WriteHTML(dir, s, reports.HTMLOptions{Verify: verify.Options{}.ForPages}); !errors.Is(err, safefile.ErrLink) {
		t.Fatalf("cell pages under a linked folder: %v, want ErrLink", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("victim written through a link: %.80q", b)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("pages written into the linked folder: %v", entries)
	}
	for _, name := range []string{"summary.json", "junit.xml"} {
		if fi, err := os.Lstat(filepath.Join(dir, name)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: %v %v, want the report in place of the link", name, err, fi)
		}
	}
}

// A report that cannot be written is an error: a directory where
// summary.json goes.
func TestAReportThatCannotBeWrittenIsAnError(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "summary.json", "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := reports.WriteJSON(dir, sample()); err == nil {
		t.Fatal("WriteJSON over a directory returned no error")
	}
}
