package margins

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/scenarios"
)

// Links planted where margins writes its files (found.yaml, margins.json)
// are replaced, never written through; only what was written is listed.
func TestMarginsFilesNeverWriteThroughALink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"found.yaml", "margins.json"} {
		if err := os.Symlink(victim, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	sc := scenarios.Scenario{Name: "x", TTL: time.Second, Faults: []faults.Spec{{Kind: "client-pause", Params: faults.ClientPauseParams{Pause: time.Second}}}}
	if err := appendReplay(filepath.Join(dir, "found.yaml"), "margin-pause-token", sc, 1, "token"); err != nil {
		t.Fatal(err)
	}
	wrote, err := (&Report{}).WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("victim written through a link: %.80q", b)
	}
	found, _ := os.ReadFile(filepath.Join(dir, "found.yaml"))
	if !strings.Contains(string(found), "      - kind: client-pause\n        pause: 1s\n") {
		t.Errorf("found.yaml lacks the fault as it ran:\n%s", found)
	}
	if !strings.HasPrefix(string(found), "# Schedules") || !strings.Contains(string(found), "margin-pause-token") {
		t.Errorf("found.yaml holds %q, want its header and the schedule", found)
	}
	if len(wrote) != 3 || wrote[0] != filepath.Join(dir, "margins.json") {
		t.Errorf("wrote %v", wrote)
	}
}

// A file that cannot be written ends the list and is an error.
func TestMarginsFileNotWrittenIsNotListed(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "margins.md", "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}
	wrote, err := (&Report{}).WriteFiles(dir)
	if err == nil || len(wrote) != 1 {
		t.Fatalf("wrote %v, err %v; want margins.json alone and an error", wrote, err)
	}
}
