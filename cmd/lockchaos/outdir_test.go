package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/internal/outdir"
	"github.com/lockchaos/lockchaos/reports"
)

func mkfile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mklink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// foreign is a directory holding someone else's files.
func foreign(t *testing.T) string {
	dir := t.TempDir()
	mkfile(t, filepath.Join(dir, "passwd"), "root:x:0:0\n")
	return dir
}

// Every command that writes an output directory applies the rule, with
// exit 2 before anything runs.
func TestEveryCommandRefusesAForeignOut(t *testing.T) {
	src := t.TempDir()
	if _, err := reports.WriteJSON(src, &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaos"}); err != nil {
		t.Fatal(err)
	}
	etc := foreign(t)
	for _, args := range [][]string{
		{"run", "--backend", "process", "--scenario", "baseline", "--lock", "token", "--out", etc},
		{"report", "--out", etc, src},
		{"margins", "--lock", "token", "--out", etc},
	} {
		code, _, stderr := runCLI(args...)
		if code != exitUsage || !strings.Contains(stderr, "not lockchaos output") {
			t.Errorf("%v: exit %d, %q; want %d, refused", args, code, stderr, exitUsage)
		}
	}
	if got := names(t, etc); len(got) != 1 {
		t.Errorf("wrote into the refused directory: %v", got)
	}
}

// oneCell runs baseline/token on real Redis into out.
func oneCell(out string) (int, string, string) {
	return runCLI("run", "--backend", "process", "--scenario", "baseline", "--lock", "token",
		"--duration", "400ms", "--time-scale", "1", "--seed", "3", "--out", out)
}

// The reproduction: a link planted at the history's name is
// replaced, its target untouched; a link where the cell's folder goes is
// refused (a harness error naming it), nothing made where it points.
func TestRunNeverWritesThroughAPlantedLink(t *testing.T) {
	out := t.TempDir()
	mkfile(t, filepath.Join(out, outdir.Marker), "")
	victim := filepath.Join(t.TempDir(), "victim")
	mkfile(t, victim, "precious\n")
	mklink(t, victim, filepath.Join(out, "baseline", "token", "history.jsonl"))
	if code, stdout, stderr := oneCell(out); code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("the history was written through the link: %.80q", b)
	}
	if !isRegular(filepath.Join(out, "baseline", "token", "history.jsonl")) {
		t.Fatal("the history is not in the link's place")
	}

	out = t.TempDir()
	mkfile(t, filepath.Join(out, outdir.Marker), "")
	elsewhere := t.TempDir()
	mklink(t, elsewhere, filepath.Join(out, "baseline"))
	code, stdout, stderr := oneCell(out)
	if code != exitHarness || !strings.Contains(stdout+stderr, "is a symbolic link (to "+elsewhere+")") {
		t.Errorf("exit %d; want %d naming the link\n%s\n%s", code, exitHarness, stdout, stderr)
	}
	if got := names(t, elsewhere); len(got) != 0 {
		t.Errorf("made %v through the linked folder", got)
	}
}

func isRegular(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular()
}
