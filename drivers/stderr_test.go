package drivers

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A real process floods its stderr (5 MB, then a last line): the file
// keeps the last StderrKeep bytes, said first how much was dropped, and
// the error quote still ends with the last line.
func TestDriverStderrKeepsABoundedTail(t *testing.T) {
	dir := t.TempDir()
	tl, err := newTail(dir, stderrName("flood", 0))
	if err != nil {
		t.Fatal(err)
	}
	const flood = 5_000_000
	cmd := exec.Command("sh", "-c", fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x >&2; echo THE-END >&2", flood))
	cmd.Stderr = tl
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if err := tl.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "driver-flood-pod0.stderr"))
	if err != nil {
		t.Fatal(err)
	}
	head, body, _ := strings.Cut(string(b), "\n")
	total := flood + len("THE-END\n")
	want := fmt.Sprintf("[lockchaos: the first %d bytes of this driver's stderr were dropped; the last %d follow]",
		total-StderrKeep, StderrKeep)
	if head != want {
		t.Errorf("first line %q, want %q", head, want)
	}
	if len(body) != StderrKeep || !strings.HasSuffix(body, "xxxTHE-END\n") {
		t.Errorf("kept %d bytes ending %q; want the last %d", len(body), body[max(0, len(body)-20):], StderrKeep)
	}
	if last := tl.Last(); !strings.Contains(last, "THE-END") {
		t.Errorf("Last() = %.60q..., want the last line", last)
	}
}

// Below the bound the file is what the driver wrote, nothing added.
func TestDriverStderrBelowTheBoundIsKeptWhole(t *testing.T) {
	dir := t.TempDir()
	tl, err := newTail(dir, stderrName("quiet", 1))
	if err != nil {
		t.Fatal(err)
	}
	whole := strings.Repeat("a line of a driver's log\n", StderrKeep/25)
	for i := 0; i < len(whole); i += 4096 {
		if _, err := tl.Write([]byte(whole[i:min(i+4096, len(whole))])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tl.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "driver-quiet-pod1.stderr")); string(b) != whole {
		t.Errorf("file holds %d bytes, want the %d written", len(b), len(whole))
	}
}

// A link planted where the stderr file goes is replaced, not written
// through (the second example).
func TestDriverStderrNeverWritesThroughALink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, stderrName("token", 0))); err != nil {
		t.Fatal(err)
	}
	tl, err := newTail(dir, stderrName("token", 0))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = tl.Write([]byte("driver says\n"))
	if err := tl.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("victim now %q", b)
	}
}
