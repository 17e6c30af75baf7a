package main

import (
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

// TestFixedToxiproxyPortAsksForParallelOneOnlyWhenRunsOverlap: a fixed
// --toxiproxy-api port is refused only where two runs would go at once
// (several cells, or --repeat, at --parallel 2 or more); one cell run once
// is fine at any --parallel. Before: "add --parallel 1" for one cell.
func TestFixedToxiproxyPortAsksForParallelOneOnlyWhenRunsOverlap(t *testing.T) {
	base, _ := scenarios.Get("baseline")
	token, _ := lockimpl.Lookup("token")
	one := []scenarios.Cell{{Scenario: base, Lock: token}}
	two := []scenarios.Cell{one[0], one[0]}
	fixed := []string{"--toxiproxy-api", "127.0.0.1:8474"}
	for _, c := range []struct {
		args  []string
		cells []scenarios.Cell
		says  string
	}{
		{append(fixed, "--parallel", "4"), one, ""},
		{append(fixed, "--parallel", "4", "--repeat", "2"), one, "2 runs would go 2 at once; add --parallel 1, or use port 0"},
		{append(fixed, "--parallel", "4"), two, "--toxiproxy-api 127.0.0.1:8474: a fixed port serves one cell at a time"},
		{append(fixed, "--parallel", "1"), two, ""},
		{[]string{"--toxiproxy-api", "127.0.0.1:0", "--parallel", "4"}, two, ""},
	} {
		err := resolved(t, c.args...).checkCells(c.cells)
		if c.says == "" && err != nil || c.says != "" && (err == nil || !strings.Contains(err.Error(), c.says)) {
			t.Errorf("%v, %d cell(s): %v; want %q", c.args, len(c.cells), err, c.says)
		}
	}
}

// TestFixedToxiproxyPortWithOverlappingRunsIsAUsageError: the command
// line that makes runs overlap on one port exits 2 before anything starts.
func TestFixedToxiproxyPortWithOverlappingRunsIsAUsageError(t *testing.T) {
	code, _, stderr := runCLI("run", "--scenario", "baseline", "--lock", "token,naive", "--toxiproxy-api", "127.0.0.1:8474",
		"--parallel", "2", "--out", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "add --parallel 1") {
		t.Fatalf("exit %d, %q; want %d asking for --parallel 1", code, stderr, exitUsage)
	}
}
