package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/scenarios"
)

// writeFile writes body to a file named name in a fresh directory.
func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunRefusesEmptyNameLists: a list flag given no name (--lock "", as
// an empty variable in a CI script gives) is a usage error, not "every
// lock".
func TestRunRefusesEmptyNameLists(t *testing.T) {
	for _, flag := range []string{"--lock", "--scenario", "--scenarios-file", "--expect", "--redis-addr"} {
		for _, v := range []string{"", " , "} {
			code, _, stderr := runCLI("run", flag, v, "--backend", "sim", "--out", t.TempDir())
			if code != exitUsage || !strings.Contains(stderr, "want one or more names, comma separated") {
				t.Errorf("%s %q: exit %d, %s", flag, v, code, stderr)
			}
		}
	}
}

// TestShardFromEnvRefusesHalfAPair: one variable of a pair, or a value
// that is no shard, is an error naming the variables; before, an index
// without its total ran every cell.
func TestShardFromEnvRefusesHalfAPair(t *testing.T) {
	for _, c := range []struct {
		env  func(string) string
		says string
	}{
		{envOf("CI_NODE_INDEX", "2"), `CI_NODE_INDEX="2" needs CI_NODE_TOTAL`},
		{envOf("CI_NODE_TOTAL", "4"), `CI_NODE_TOTAL="4" is set without CI_NODE_INDEX`},
		{envOf("CI_NODE_INDEX", "x", "CI_NODE_TOTAL", "4"), `CI_NODE_INDEX="x": want a whole number in 1..4`},
		{envOf("CI_NODE_INDEX", "0", "CI_NODE_TOTAL", "4"), `CI_NODE_INDEX="0": want a whole number in 1..4`},
		{envOf("CI_NODE_INDEX", "5", "CI_NODE_TOTAL", "4"), `CI_NODE_INDEX="5": want a whole number in 1..4`},
		{envOf("CI_NODE_INDEX", "1", "CI_NODE_TOTAL", "0"), `CI_NODE_TOTAL="0": want a whole number of shards, 1 or more`},
		{envOf("CI_NODE_INDEX", "1", "CI_NODE_TOTAL", "four"), `CI_NODE_TOTAL="four": want a whole number of shards`},
		{envOf("LOCKCHAOS_SHARD_TOTAL", "3"), `LOCKCHAOS_SHARD_TOTAL="3" is set without JOB_COMPLETION_INDEX`},
		{envOf("JOB_COMPLETION_INDEX", "3", "LOCKCHAOS_SHARD_TOTAL", "3"), `JOB_COMPLETION_INDEX="3": want a whole number in 0..2`},
		{envOf("JOB_COMPLETION_INDEX", "-1", "LOCKCHAOS_SHARD_TOTAL", "3"), `JOB_COMPLETION_INDEX="-1": want a whole number in 0..2`},
	} {
		got, _, err := scenarios.ShardFromEnv(c.env)
		if err == nil || !strings.Contains(err.Error(), c.says) || got != "" {
			t.Errorf("shard %q, %v; want an error saying %s", got, err, c.says)
		}
	}
	t.Setenv("CI_NODE_INDEX", "2")
	t.Setenv("CI_NODE_TOTAL", "")
	code, _, stderr := runCLI("run", "--backend", "sim", "--out", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "needs CI_NODE_TOTAL") {
		t.Fatalf("CI_NODE_INDEX alone: exit %d, %s", code, stderr)
	}
}

// TestRunRefusesSeedsThatWrap: --seed near the largest int64 with
// --repeat would wrap the runs' seeds negative; a negative one would pass
// 0 (the default seed). Both are usage errors with the largest (or
// smallest) seed that works; --same-seed derives no other.
func TestRunRefusesSeedsThatWrap(t *testing.T) {
	const maxSeed = "9223372036854775807"
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--seed", maxSeed, "--repeat", "2"}, "--seed: scenarios: invalid seed " + maxSeed +
			" with 2 runs per cell: their seeds would pass the largest, " + maxSeed + "; want a seed of at most 9223372036854775806 (--repeat 2)"},
		{[]string{"--seed", "-1", "--repeat", "2"}, "their seeds -1..0 would pass 0"},
	} {
		f, err := parseRun(c.args...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := resolveRun(f, testNow); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%v: %v; want an error saying %q", c.args, err, c.says)
		}
	}
	resolved(t, "--seed", maxSeed)
	resolved(t, "--seed", maxSeed, "--repeat", "2", "--same-seed")
	resolved(t, "--seed", strconv.Itoa(-2), "--repeat", "2")
}

// TestRunBoundsPartsAndFaultWindows: --part-length below 100ms, a cell
// cut into more than 100,000 parts, and a scenario whose gaps could open
// more than 100,000 fault windows in a part are usage errors before
// anything starts (a part length of 1 ns ran the Go runtime out of
// memory; gaps of 1 ns fired 385,416 windows).
func TestRunBoundsPartsAndFaultWindows(t *testing.T) {
	long := writeFile(t, "long.yaml", "scenarios:\n  - name: i33-dense\n    duration: 200s\n    gap_min: 1ms\n    gap_max: 1ms\n"+
		"    faults: [{kind: client-pause, pause: 1ms}]\n    expect: {token: unsafe}\n")
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--scenario", "baseline", "--lock", "token", "--part-length", "1ns"}, "--part-length 1ns: want 100ms or more"},
		{[]string{"--scenario", "baseline", "--lock", "token", "--part-length", "100ms", "--duration", "720h"},
			"cuts its 720h0m0s into 25920000 parts, more than 100000; want a part length of at least 25.92s"},
		{[]string{"--scenario", "baseline", "--duration", "721h"}, "--duration 721h0m0s: want at most 720h0m0s"},
		{[]string{"--scenario", "baseline", "--recover-within", "2562047h"}, "--recover-within 2562047h0m0s: want at most 720h0m0s"},
		{[]string{"--scenario", "baseline", "--budget", "721h"}, "--budget 721h0m0s: want at most 720h0m0s"},
		{[]string{"--scenarios-file", long, "--scenario", "i33-dense"}, "scenarios: cell too large: i33-dense/token: gap_min 1ms over 2m0s fires up to 119901 " +
			"fault windows, more than the 100000 a cell holds; want gap_min at least 2ms"},
	} {
		code, _, stderr := runCLI(append(append([]string{"run"}, c.args...), "--backend", "sim", "--out", t.TempDir())...)
		if code != exitUsage || !strings.Contains(stderr, c.says) {
			t.Errorf("%v: exit %d, %s; want exit 2 saying %q", c.args, code, stderr, c.says)
		}
	}
}

// TestRunRefusesHostileScenarioFiles: a scenarios file with NaN in a
// number, a 1 ns gap, a second document, or a scenario another file
// already defines is a usage error at its file and line.
func TestRunRefusesHostileScenarioFiles(t *testing.T) {
	sc := "scenarios:\n  - name: i33-x\n    expect: {token: safe}\n"
	nan := writeFile(t, "nan.yaml", sc+"    max_indefinite: .nan\n")
	gap := writeFile(t, "gap.yaml", sc+"    faults: [{kind: client-pause, pause: 1ns}]\n    gap_min: 1ns\n    gap_max: 1ns\n")
	docs := writeFile(t, "docs.yaml", sc+"---\n"+sc)
	first := writeFile(t, "first.yaml", sc)
	second := writeFile(t, "second.yaml", "# the same again\n"+sc)
	for _, c := range []struct {
		files []string
		says  string
	}{
		{[]string{nan}, nan + ":4: scenarios: invalid scenario: max_indefinite .nan in scenario i33-x: want a finite number"},
		{[]string{gap}, gap + ":5: scenarios: invalid scenario \"i33-x\": gap_min 1ns is below the shortest gap between faults, 1ms"},
		{[]string{docs}, docs + ":4: scenarios: invalid scenario: a second YAML document"},
		{[]string{first, second}, second + ":3: scenarios: invalid scenario \"i33-x\": defined again (first in " + first + ":2)"},
	} {
		args := []string{"run", "--backend", "sim", "--out", t.TempDir()}
		for _, f := range c.files {
			args = append(args, "--scenarios-file", f)
		}
		code, _, stderr := runCLI(args...)
		if code != exitUsage || !strings.Contains(stderr, c.says) {
			t.Errorf("%v: exit %d, %s; want exit 2 saying %q", c.files, code, stderr, c.says)
		}
	}
}
