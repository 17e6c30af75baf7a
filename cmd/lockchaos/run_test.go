package main

import (
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/reports/reportstest"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

func TestRunOneCellWritesSummaryJUnitAndHistory(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runCLI("run", "--scenario", "baseline", "--lock", "token,naive", "--duration", "400ms", "--seed", "5", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "seed 5") || !strings.Contains(stdout, "baseline               token") {
		t.Fatalf("output does not show the seed and the matrix:\n%s\n%s", stderr, stdout)
	}
	sum, err := reports.ReadJSON(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Seed != 5 || len(sum.Cells) != 2 || sum.Totals["met"] != 2 {
		t.Fatalf("summary %+v", sum)
	}
	for _, c := range sum.Cells {
		if !strings.Contains(c.Rerun, "--seed 5") || !strings.Contains(c.Rerun, "--duration 400ms") {
			t.Errorf("rerun %q", c.Rerun)
		}
		if filepath.IsAbs(c.History) {
			t.Errorf("history path %q should be relative to the output dir", c.History)
		}
		if _, err := history.LoadFile(filepath.Join(out, c.History)); err != nil {
			t.Errorf("history of %s/%s: %v", c.Scenario, c.Lock, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
		} `xml:"testsuite"`
	}
	err = xml.Unmarshal(b, &suites)
	tests := 0
	for _, s := range suites.Suites {
		tests += s.Tests
	}
	if err != nil || len(suites.Suites) != 1 || tests != 2 || suites.Suites[0].Failures != 0 {
		t.Fatalf("junit: %v %+v\n%s", err, suites, b)
	}
	reportstest.ValidJUnit(t, filepath.Join(out, "junit.xml"))
}

func TestRunServesToxiproxyAPIWhenAsked(t *testing.T) {
	code, _, stderr := runCLI("run", "--scenario", "baseline", "--lock", "token", "--duration", "300ms",
		"--toxiproxy-api", "127.0.0.1:0", "--out", t.TempDir())
	if code != exitOK || !strings.Contains(stderr, "baseline/token: toxiproxy API on http://127.0.0.1:") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCLI("run", "--toxiproxy-api", "0.0.0.0:8474", "--parallel", "1"); code != exitUsage || !strings.Contains(stderr, "not loopback") {
		t.Fatalf("non-loopback API: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runCLI("run", "--toxiproxy-api", "127.0.0.1:8474"); code != exitUsage || !strings.Contains(stderr, "--parallel 1") {
		t.Fatalf("fixed port with parallel cells: exit %d, %q", code, stderr)
	}
}

func TestRunUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"run", "--scenario", "gc-pouse"}, "valid: abandoned-lease, baseline"},
		{[]string{"run", "--lock", "spinlock"}, "valid: mutex, naive"},
		{[]string{"run", "--shard", "3"}, "want i/n"},
		{[]string{"run", "--shard", "5/4"}, "shard 5/4"},
		{[]string{"run", "--backend", "cloud"}, "valid: auto, process"},
		{[]string{"run", "--repeat", "0"}, "--repeat 0: want 1 or more"},
		{[]string{"run", "extra"}, "unexpected argument"},
		{[]string{"run", "--scenarios-file", "/nonexistent.yaml"}, "nonexistent.yaml"},
		{[]string{"run", "--min-cycles", "-1"}, "--min-cycles -1: want 0 or more"},
		{[]string{"run", "--min-exercised", "three"}, "whole number"},
		{[]string{"run", "--max-indefinite", "1.5"}, "--max-indefinite 1.5"},
		{[]string{"run", "--max-duration", "-1s"}, `"--max-duration" flag: want a positive duration`},
		{[]string{"run", "--time-scale", "0.01"}, "--time-scale"},
		{[]string{"run", "--time-scale", "-2"}, "--time-scale"},
		{[]string{"run", "--clients", "100000"}, `"--clients" flag: want 1..256`},
		{[]string{"run", "--service", "mysql"}, `--service "mysql": valid: redis, postgres`},
	} {
		code, _, stderr := runCLI(c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.says) {
			t.Errorf("%v: exit %d, stderr %q; want %d mentioning %q", c.args, code, stderr, exitUsage, c.says)
		}
	}
}

func TestRunWithoutRedisSaysHowToGetIt(t *testing.T) {
	t.Setenv("LOCKCHAOS_REDIS_SERVER", filepath.Join(t.TempDir(), "nothing-here"))
	code, _, stderr := runCLI("run", "--backend", "process", "--scenario", "baseline", "--lock", "token", "--out", t.TempDir())
	if code != exitHarness || !strings.Contains(stderr, "apt-get install redis-server") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	// auto with neither redis-server nor a Docker engine names both ways
	// (a LOCKCHAOS_REDIS_SERVER set is no fallback: none on PATH here).
	t.Setenv("LOCKCHAOS_REDIS_SERVER", "")
	t.Setenv("PATH", t.TempDir())
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no-docker.sock"))
	code, _, stderr = runCLI("run", "--scenario", "baseline", "--lock", "token", "--out", t.TempDir())
	if code != exitHarness || !strings.Contains(stderr, "apt-get install redis-server") || !strings.Contains(stderr, "make redis-image") || !strings.Contains(stderr, "Docker") {
		t.Fatalf("auto without either: exit %d, stderr %q", code, stderr)
	}
}

func TestRunExitCodes(t *testing.T) {
	for _, c := range []struct {
		s    *reports.Summary
		want int
	}{
		{summaryOf(results.Met, results.Skipped), exitOK},
		{summaryOf(results.Met, results.Missed), exitViolation},
		{summaryOf(results.Regression, results.HarnessError), exitViolation},
		{summaryOf(results.Met, results.HarnessError), exitHarness},
		{summaryOf(results.Met, results.Unknown), exitInconclusive},
		{summaryOf(results.Met, results.Inconclusive), exitInconclusive},
		{summaryOf(results.Inconclusive, results.Missed), exitViolation},
	} {
		if got := c.s.ExitCode(true); got != c.want {
			t.Errorf("%v: exit %d, want %d", c.s.Totals, got, c.want)
		}
	}
}

// TestInterruptStopsCleanly runs the real binary, sends SIGINT mid-run and
// checks the exit code, the partial results and that no Redis survived.
func TestInterruptStopsCleanly(t *testing.T) {
	bin := lockchaosBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		tmp, out := t.TempDir(), t.TempDir()
		interruptMidRun(t, sig, tmp, out, bin, "run", "--scenario", "baseline,gc-pause", "--lock", "token", "--duration", "20s",
			"--out", out)
		sum, err := reports.ReadJSON(filepath.Join(out, "summary.json"))
		if err != nil || !sum.Interrupted {
			t.Fatalf("%v: partial summary: %v %+v", sig, err, sum)
		}
		for _, c := range sum.Cells {
			h, err := history.LoadFile(filepath.Join(out, c.History))
			if err != nil || len(h.Events) == 0 {
				t.Fatalf("%v: history of %s: %v", sig, c.Scenario, err)
			}
		}
		if left, _ := filepath.Glob(filepath.Join(tmp, "lockchaos-redis-*")); len(left) > 0 {
			t.Fatalf("%v: node dirs left behind: %v", sig, left)
		}
		if pids := redisServersUnder(tmp); len(pids) > 0 {
			t.Fatalf("%v: redis-server still running from %s: %v", sig, tmp, pids)
		}
	}
}

// interruptMidRun starts the binary with args (TMPDIR tmp, histories
// under out), sends sig once both token cells are at work, and fails t
// unless it exits with the signal's code (130, 143).
func interruptMidRun(t *testing.T, sig syscall.Signal, tmp, out string, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "CI=true")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until both cells are at work: each history holds an event
	// after its header (the recorder writes as it goes).
	deadline := time.Now().Add(20 * time.Second)
	for !bothAtWork(out) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("cells did not start: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Signal(sig)
	err := cmd.Wait()
	want := map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143}[sig]
	if code := cmd.ProcessState.ExitCode(); code != want {
		t.Fatalf("%v: exit %d (%v), want %d\n%s", sig, code, err, want, stderr.String())
	}
}

// bothAtWork reports whether out holds two histories of the token lock,
// each with a line after its header.
func bothAtWork(out string) bool {
	m, _ := filepath.Glob(filepath.Join(out, "*", "token", "history.jsonl"))
	for _, f := range m {
		if b, _ := os.ReadFile(f); strings.Count(string(b), "\n") < 2 {
			return false
		}
	}
	return len(m) == 2
}

// redisServersUnder lists redis-server processes whose working dir is
// under dir.
func redisServersUnder(dir string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd")
		if err != nil || !strings.HasPrefix(cwd, dir) {
			continue
		}
		comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		if strings.HasPrefix(string(comm), "redis-server") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestReportMergesShards(t *testing.T) {
	base := t.TempDir()
	var dirs []string
	for i := 1; i <= 2; i++ {
		dir := filepath.Join(base, "shard"+string(rune('0'+i)))
		code, stdout, stderr := runCLI("run", "--scenario", "baseline", "--lock", "token,fenced", "--duration", "300ms",
			"--seed", "3", "--shard", string(rune('0'+i))+"/2", "--out", dir)
		if code != exitOK {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, code, stdout, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "index.html")); err != nil {
			t.Fatalf("run did not write index.html: %v", err)
		}
		dirs = append(dirs, dir)
	}
	merged := filepath.Join(base, "all")
	code, stdout, stderr := runCLI(append([]string{"report", "--out", merged}, dirs...)...)
	if code != exitOK {
		t.Fatalf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	index, err := os.ReadFile(filepath.Join(merged, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">token<", ">fenced<", "1/2, 2/2"} {
		if !strings.Contains(string(index), want) {
			t.Errorf("merged index lacks %q", want)
		}
	}
	for _, page := range []string{"baseline--token.html", "baseline--fenced.html"} {
		b, err := os.ReadFile(filepath.Join(merged, "cells", page))
		if err != nil {
			t.Fatal(err)
		}
		// The history link must point back into the shard's directory.
		if !strings.Contains(string(b), "../../shard") {
			t.Errorf("%s does not link to its shard's history", page)
		}
	}
	if code, _, stderr := runCLI("report", filepath.Join(base, "nowhere")); code != exitUsage || !strings.Contains(stderr, "summary.json") {
		t.Errorf("missing summary: exit %d, %q", code, stderr)
	}
}

// TestRunBelowTheFloorExitsInconclusive: a cell that cannot reach its
// evidence floor is never a pass: run exits 4 and says why.
func TestRunBelowTheFloorExitsInconclusive(t *testing.T) {
	out := t.TempDir()
	code, stdout, _ := runCLI("run", "--scenario", "baseline", "--lock", "token", "--duration", "1ns", "--max-duration", "1ns",
		"--time-scale", "1", "--seed", "3", "--out", out)
	if code != exitInconclusive || !strings.Contains(stdout, "inconclusive") || !strings.Contains(stdout, "too few cycles") {
		t.Fatalf("exit %d, stdout:\n%s", code, stdout)
	}
	junit, err := os.ReadFile(filepath.Join(out, "junit.xml"))
	if err != nil || !strings.Contains(string(junit), `<error message="below the evidence floor`) {
		t.Fatalf("junit.xml: %v\n%s", err, junit)
	}
	reportstest.ValidJUnit(t, filepath.Join(out, "junit.xml"))
}

// TestKilledHarnessLeavesNoDriver: SIGKILL of the harness mid-cell (no
// cleanup runs at all) still leaves no driver process: each is exec'd with
// the parent-death signal, and a paused one dies too.
func TestKilledHarnessLeavesNoDriver(t *testing.T) {
	bin, driver := binaries(t)
	out := t.TempDir()
	cmd := exec.Command(bin, "run", "--scenario", "gc-pause", "--lock", "proc-token", "--lock-driver", "proc-token="+driver+" --lock token",
		"--duration", "20s", "--time-scale", "1", "--out", out)
	cmd.Env = append(os.Environ(), "CI=true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(processesRunning(driver)) < 8 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the drivers did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A pause under way: a driver stopped (SIGSTOP) when the harness dies.
	for len(processesStopped(driver)) == 0 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("no driver was paused")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	for deadline := time.Now().Add(5 * time.Second); len(processesRunning(driver)) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("driver processes outlived the harness: %v", processesRunning(driver))
		}
	}
}

// processesStopped lists the pids of processesRunning(path) that are
// stopped (state T in /proc/PID/stat).
func processesStopped(path string) []string {
	var out []string
	for _, pid := range processesRunning(path) {
		b, _ := os.ReadFile("/proc/" + pid + "/stat")
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i:]), ") T") {
			out = append(out, pid)
		}
	}
	return out
}

// processesRunning lists pids whose executable is path.
func processesRunning(path string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		exe, err := os.Readlink("/proc/" + e.Name() + "/exe")
		if err == nil && exe == path {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestFourShardsAtOnceMergeToTheUnshardedRun runs four shards as separate
// processes at the same time, each taking its shard from the CI variables
// (CI_NODE_INDEX / CI_NODE_TOTAL) as a GitLab parallel job would, merges
// them with `report`, and checks the merged summary holds exactly the cells
// of an unsharded run: none lost, none twice.
func TestFourShardsAtOnceMergeToTheUnshardedRun(t *testing.T) {
	bin := lockchaosBinary(t)
	base := t.TempDir()
	args := []string{"run", "--scenario", "baseline,slow-holder", "--lock", "token,naive,fenced", "--duration", "300ms", "--seed", "3", "--parallel", "1"}
	cells := func(dir string) []string {
		s, err := reports.ReadJSON(filepath.Join(dir, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range s.Cells {
			out = append(out, c.Scenario+"/"+c.Lock)
		}
		sort.Strings(out)
		return out
	}
	var dirs []string
	var cmds []*exec.Cmd
	for i := 1; i <= 4; i++ {
		dir := filepath.Join(base, fmt.Sprintf("shard%d", i))
		dirs = append(dirs, dir)
		cmd := exec.Command(bin, append(args, "--out", dir)...)
		cmd.Env = append(os.Environ(), fmt.Sprintf("CI_NODE_INDEX=%d", i), "CI_NODE_TOTAL=4", "CI=true")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	// A verdict (1) or an inconclusive cell (4) is a run's business; only
	// usage (2) and harness (3) errors would spoil the merge.
	ranThrough := func(err error) bool {
		var ee *exec.ExitError
		return err == nil || (errors.As(err, &ee) && (ee.ExitCode() == exitViolation || ee.ExitCode() == exitInconclusive))
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); !ranThrough(err) {
			t.Fatalf("shard %d: %v", i+1, err)
		}
	}
	merged := filepath.Join(base, "all")
	if out, err := exec.Command(bin, append([]string{"report", "--out", merged}, dirs...)...).CombinedOutput(); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	whole := filepath.Join(base, "whole")
	if out, err := exec.Command(bin, append(args, "--out", whole)...).CombinedOutput(); !ranThrough(err) {
		t.Fatalf("unsharded run: %v\n%s", err, out)
	}
	got, want := cells(merged), cells(whole)
	if strings.Join(got, ",") != strings.Join(want, ",") || len(want) != 6 {
		t.Fatalf("merged shards hold %v, the unsharded run %v", got, want)
	}
}

// The line that reruns the whole run (index.html's "rerun everything")
// is the command as typed with the seed, the time scale and the shard the
// run had: a random seed, a measured scale and a shard from the CI's
// variables are not in what was typed. A value given is replaced, in
// either spelling; another flag's value is never taken for a flag.
func TestRerunEverythingPinsSeedTimeScaleAndShard(t *testing.T) {
	c, args := runConfig{seed: 42, shard: "2/4"},
		[]string{"--scenario", "baseline", "--seed=7", "--time-scale", "0", "--json", "--lock-driver", "--seed"}
	want := "lockchaos run --scenario baseline --json --lock-driver --seed --seed 42 --time-scale 1.50 --shard 2/4"
	if got := rerunAll(c, args, scenarios.Timing{Scale: 1.5}); got != want {
		t.Errorf("rerun:\n got %s\nwant %s", got, want)
	}
	c, args = runConfig{seed: 3}, []string{"--backend", "sim"}
	if got, want := rerunAll(c, args, scenarios.Timing{Scale: 1, Virtual: true}), "lockchaos run --backend sim --seed 3"; got != want {
		t.Errorf("simulated, no shard: %s, want %s", got, want)
	}
	notMeasured := scenarios.Timing{Calibration: reports.CalibrationInterrupted}
	if got, want := rerunAll(c, args, notMeasured), "lockchaos run --backend sim --seed 3"; got != want {
		t.Errorf("calibration interrupted (no scale): %s, want %s", got, want)
	}
}

// summaryOf is a summary of cells with these outcomes, tallied.
func summaryOf(outcomes ...results.Outcome) *reports.Summary {
	s := &reports.Summary{}
	for _, o := range outcomes {
		s.Cells = append(s.Cells, &results.Cell{Outcome: o})
	}
	s.Tally()
	return s
}
