package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/scenarios"
)

func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func testdata(name string) string { return filepath.Join("..", "..", "checker", "testdata", name) }

func TestCheckExitCodes(t *testing.T) {
	cases := []struct {
		file string
		code int
		says string
	}{
		{"pass.jsonl", exitOK, "verdict: pass"},
		{"lost-update.jsonl", exitViolation, "both read 0 and wrote 1: one increment lost"},
		{"foreign-release.jsonl", exitViolation, "removed a lock it no longer held"},
		{"stale-fence-rejected.jsonl", exitOK, "(not decisive)"},
	}
	for _, c := range cases {
		code, out, errOut := runCLI("check", testdata(c.file))
		// The report names the file it checked.
		if code != c.code || !strings.Contains(out, c.says) || !strings.HasPrefix(out, testdata(c.file)+": ") {
			t.Errorf("check %s: exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", c.file, code, c.code, out, errOut)
		}
	}
}

func TestCheckBadInputSaysFileAndLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "broken.jsonl")
	body, _ := os.ReadFile(testdata("pass.jsonl"))
	lines := strings.SplitAfter(string(body), "\n")
	lines[4] = "{\"op\": 3, \"phase\": \"ret\n" // corrupt line 5
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI("check", path)
	if code != exitUsage || !strings.Contains(errOut, "broken.jsonl:5:") {
		t.Fatalf("exit %d, stderr %q; want %d and file:line", code, errOut, exitUsage)
	}
	if code, _, _ := runCLI("check", filepath.Join(t.TempDir(), "missing.jsonl")); code != exitUsage {
		t.Fatalf("missing file: exit %d", code)
	}
}

func TestCheckJSON(t *testing.T) {
	code, out, _ := runCLI("check", "--json", testdata("lost-update.jsonl"))
	if code != exitViolation {
		t.Fatalf("exit %d", code)
	}
	var rep struct {
		Verdict string
		Results []struct {
			Property       string
			Status         string
			ViolationCount int `json:"violation_count"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep.Verdict != "fail" || len(rep.Results) != 9 {
		t.Fatalf("%+v", rep)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"frobnicate"}, {"check"}, {"check", "a", "b"}, {"check", "--budget", "-1s", "x"}} {
		if code, _, _ := runCLI(args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--same-seed"}, "--same-seed goes with --repeat"},
		{[]string{"run", "--backend", "sim", "--redis-image", "x"}, "the simulation runs no image"},
		{[]string{"run", "--backend", "sim", "--toxiproxy-api", "127.0.0.1:8474"}, "simulated links are not toxiproxy's"},
		{[]string{"run", "--replay-on", "process"}, "--replay-on goes with --backend sim"},
	} {
		if code, _, errOut := runCLI(c.args...); code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, errOut, exitUsage, c.want)
		}
	}
	_, _, errOut := runCLI("frobnicate")
	if !strings.Contains(errOut, "valid: run, choose, list, check") {
		t.Errorf("unknown command does not list the valid ones: %q", errOut)
	}
	if code, out, _ := runCLI("help"); code != exitOK || !strings.Contains(out, "Exit codes") {
		t.Errorf("help: %d %q", code, out)
	}
}

func TestVersionCommandAndFlag(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, stdout, _ := runCLI(args...)
		if code != exitOK || !strings.HasPrefix(stdout, "lockchaos ") || !strings.Contains(stdout, "go1.") {
			t.Errorf("%v: exit %d, %q", args, code, stdout)
		}
	}
}

func TestShardComesFromTheCIEnvironment(t *testing.T) {
	for _, c := range []struct {
		env       func(string) string
		want, err string
	}{
		{envOf(), "", ""},
		{envOf("CI_NODE_INDEX", "2", "CI_NODE_TOTAL", "4"), "2/4", ""},
		{envOf("JOB_COMPLETION_INDEX", "0", "LOCKCHAOS_SHARD_TOTAL", "3"), "1/3", ""},
		{envOf("JOB_COMPLETION_INDEX", "2"), "", "needs LOCKCHAOS_SHARD_TOTAL"},
	} {
		got, _, err := scenarios.ShardFromEnv(c.env)
		if got != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("shard %q, err %v; want %q, err containing %q", got, err, c.want, c.err)
		}
	}
	code, _, stderr := runCLI("run", "--shard", "3/2", "--out", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "invalid shard 3/2") || strings.Contains(stderr, "invalid scenario") {
		t.Fatalf("--shard 3/2: exit %d, %s", code, stderr)
	}
}

func TestListJSONHasEveryScenarioLockAndFaultKind(t *testing.T) {
	code, stdout, stderr := runCLI("list", "--json", "--scenarios-file", "../../scenarios/critiques.yaml")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var l struct {
		Format    int `json:"format"`
		Scenarios []struct {
			Name   string `json:"name"`
			Expect map[string]struct {
				Safety   string `json:"safety"`
				Liveness string `json:"liveness"`
			} `json:"expect"`
		} `json:"scenarios"`
		Locks      []struct{ Name string } `json:"locks"`
		FaultKinds []struct {
			Name  string         `json:"name"`
			Needs map[string]any `json:"needs"`
		} `json:"fault_kinds"`
	}
	if err := json.Unmarshal([]byte(stdout), &l); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	names := map[string]bool{}
	for _, s := range l.Scenarios {
		names[s.Name] = true
		if s.Name == "gc-pause" && (s.Expect["token"].Safety != "unsafe" || s.Expect["token"].Liveness != "live") {
			t.Errorf("gc-pause/token expects %+v, want safety unsafe, liveness live", s.Expect["token"])
		}
	}
	kinds := map[string]map[string]any{}
	for _, k := range l.FaultKinds {
		kinds[k.Name] = k.Needs
	}
	if l.Format != 2 || !names["gc-pause"] || !names["clock-jump"] || len(l.Locks) < 6 || kinds["clock-jump"]["clock"] != true {
		t.Fatalf("listing %+v", l)
	}
}

func TestFlagsGoAnywhereAndTyposGetASuggestion(t *testing.T) {
	// A flag after the positional argument is a flag, not a second file.
	code, _, stderr := runCLI("check", "no-such-history.jsonl", "--json")
	if code != exitUsage || strings.Contains(stderr, "exactly one") || !strings.Contains(stderr, "no-such-history.jsonl") {
		t.Fatalf("check FILE --json: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCLI("list", "--jsn")
	if code != exitUsage || !strings.Contains(stderr, "did you mean --json?") || strings.Contains(stderr, "Usage:") {
		t.Fatalf("list --jsn: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCLI("run", "--senario", "gc-pause")
	if code != exitUsage || !strings.Contains(stderr, "did you mean --scenario?") {
		t.Fatalf("run --senario: exit %d, %s", code, stderr)
	}
	code, stdout, _ := runCLI("run", "--help")
	if code != exitOK || !strings.Contains(stdout, "-redis-image string") {
		t.Fatalf("run --help: exit %d, the image flag's value name is not 'string':\n%s", code, stdout)
	}
}

// envOf is a getenv over these key, value pairs.
func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}
