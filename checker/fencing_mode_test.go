package checker_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// Only the modes that say the resource checks fences excuse an overlap: a
// double hold with any other word in the header is a decisive violation
// when checked in memory, and bad input (file:line) when read from a file.
// An unknown mode used to read as "checks fences": a double hold passed.
func TestUnknownFencingModeExcusesNoOverlap(t *testing.T) {
	h := load(t, "overlap.jsonl")
	h.Header.Fencing = "bogus"
	rep := check(t, h)
	me := rep.Results[0]
	if me.Property != checker.MutualExclusion || !me.Decisive || me.Status != checker.Fail || rep.Verdict != checker.Fail {
		t.Fatalf("fencing %q: %s %s decisive %v, verdict %s", h.Header.Fencing, me.Property, me.Status, me.Decisive, rep.Verdict)
	}
	body, err := os.ReadFile(filepath.Join("testdata", "overlap.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bogus.jsonl")
	if err := os.WriteFile(path, []byte(strings.Replace(string(body), `"fencing": "off"`, `"fencing": "bogus"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = checker.CheckFile(context.Background(), path, checker.FileOptions{})
	if !errors.Is(err, history.ErrMalformed) || !strings.Contains(err.Error(), `bogus.jsonl:1: header: unknown fencing mode "bogus"`) {
		t.Fatalf("CheckFile: %v", err)
	}
}
