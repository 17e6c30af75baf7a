package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// TestRunBackendSimFromTheBinary runs the simulated backend from a built
// binary, as a user would: synctest bubbles need a testing.T, which the
// command makes with testing.MainStart (sim.Host). It checks the verdicts,
// that the testing framework's own output ("PASS", "=== RUN") is nowhere,
// and that every output says the results are simulated.
func TestRunBackendSimFromTheBinary(t *testing.T) {
	bin := lockchaosBinary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "run", "--backend", "sim", "--scenario", "baseline,gc-pause,failover", "--lock", "token,redlock,fenced",
		"--seed", "3", "--repeat", "2", "--out", dir)
	cmd.Env = append(os.Environ(), "CI=true")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run --backend sim: %v\n%s", err, out)
	}
	text := string(out)
	for _, noise := range []string{"\nPASS", "=== RUN", "--- PASS", "testing:"} {
		if strings.Contains(text, noise) {
			t.Errorf("the testing framework's output %q leaked into the command's:\n%s", noise, text)
		}
	}
	for _, want := range []string{"SIMULATED: backend sim", "backend sim (simulated)", "schedules/s", "histories were not kept: --keep-histories"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	validate(t, compileSchema(t, "summary.v2.json"), "summary.json", b)
	var sum reports.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Backend != "sim" || !sum.Simulated || sum.SchedulesPerSecond <= 0 {
		t.Errorf("summary: backend %q, simulated %v, %v schedules/s", sum.Backend, sum.Simulated, sum.SchedulesPerSecond)
	}
	ran := 0
	for _, c := range sum.Cells {
		if !c.Simulated || c.Backend != "sim" {
			t.Errorf("%s: cell not marked simulated (backend %q)", c.Name(), c.Backend)
		}
		if c.Outcome != results.Skipped && !strings.Contains(c.Rerun, "--backend sim") {
			t.Errorf("%s: rerun line %q would not rerun it simulated", c.Name(), c.Rerun)
		}
		switch {
		case c.Scenario == "failover":
			if c.Outcome != results.Skipped || !strings.Contains(c.Error, "sim backend") && !strings.HasPrefix(c.Error, "not applicable") {
				t.Errorf("%s: %s %q, want skipped with the reason", c.Name(), c.Outcome, c.Error)
			}
		case c.Outcome != results.Met:
			t.Errorf("%s: %s", c.Name(), c.Summary())
		default:
			ran++
			// A sweep keeps each cell's first run's history and drops
			// the other met runs' (they rerun from their seed).
			name := filepath.Join(dir, c.Scenario, c.Lock, fmt.Sprintf("history-seed%d.jsonl", c.RunSeed))
			_, statErr := os.Stat(name)
			if first := c.RunSeed == 3; first && (c.History == "" || c.HistoryDropped || statErr != nil) ||
				!first && (c.History != "" || !c.HistoryDropped || statErr == nil) {
				t.Errorf("%s seed %d: history %q, dropped %v, file: %v", c.Name(), c.RunSeed, c.History, c.HistoryDropped, statErr)
			}
		}
	}
	if ran != 12 { // (baseline, gc-pause) x (token, redlock, fenced) x 2 seeds
		t.Errorf("%d cell runs met their expectation, want 12", ran)
	}
	junit, _ := os.ReadFile(filepath.Join(dir, "junit.xml"))
	html, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	for what, doc := range map[string]string{"junit.xml": string(junit), "index.html": string(html)} {
		if !strings.Contains(doc, "SIMULATED") && !strings.Contains(doc, "lockchaos.sim") {
			t.Errorf("%s does not say the results are simulated", what)
		}
	}
	hist, err := os.ReadFile(filepath.Join(dir, "gc-pause", "token", "history-seed3.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(string(hist), "\n")
	if !strings.Contains(header, `"backend":"sim","simulated":true`) {
		t.Errorf("history header does not record the backend: %s", header)
	}
	check, _ := exec.Command(bin, "check", filepath.Join(dir, "gc-pause", "token", "history-seed3.jsonl")).CombinedOutput()
	if !strings.Contains(string(check), "SIMULATED") {
		t.Errorf("check does not say the history is simulated:\n%s", check)
	}
	// The JSON stream says it from its first line.
	jcmd := exec.Command(bin, "run", "--backend", "sim", "--scenario", "baseline", "--lock", "token", "--seed", "3", "--json", "--out", t.TempDir())
	jout, err := jcmd.Output()
	if err != nil {
		t.Fatalf("run --backend sim --json: %v\n%s", err, jout)
	}
	first, _, _ := strings.Cut(string(jout), "\n")
	validate(t, compileSchema(t, "run-stream.v1.json"), "the start line", []byte(first))
	var start struct {
		Type      string `json:"type"`
		Simulated bool   `json:"simulated"`
	}
	if err := json.Unmarshal([]byte(first), &start); err != nil || start.Type != "start" || !start.Simulated {
		t.Errorf("the stream's start line does not say simulated: %s (%v)", first, err)
	}
}

// TestSimSweepKeepsHistoriesWhenAsked: --keep-histories keeps every
// run's history, and a page rendered later for a run whose history was
// dropped says so rather than showing an empty timeline.
func TestSimSweepKeepsHistoriesWhenAsked(t *testing.T) {
	for _, keep := range []bool{true, false} {
		dir := t.TempDir()
		args := []string{"run", "--backend", "sim", "--scenario", "baseline", "--lock", "token", "--seed", "5", "--repeat", "3", "--out", dir}
		if keep {
			args = append(args, "--keep-histories")
		}
		var stdout, stderr strings.Builder
		if code := run(args, &stdout, &stderr); code != exitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout.String(), stderr.String())
		}
		kept, _ := filepath.Glob(filepath.Join(dir, "baseline", "token", "history-seed*.jsonl"))
		if want := map[bool]int{true: 3, false: 1}[keep]; len(kept) != want {
			t.Errorf("--keep-histories %v: %d histories kept %v, want %d", keep, len(kept), kept, want)
		}
		if keep {
			continue
		}
		stdout.Reset()
		if code := run([]string{"report", "--all-pages", dir}, &stdout, &stderr); code != exitOK {
			t.Fatalf("report --all-pages: exit %d\n%s", code, stderr.String())
		}
		page, err := os.ReadFile(filepath.Join(dir, "cells", "baseline--token--seed6.html"))
		if err != nil {
			entries, _ := os.ReadDir(filepath.Join(dir, "cells"))
			t.Fatalf("%v (pages: %v)", err, entries)
		}
		if !strings.Contains(string(page), "the history was not kept") {
			t.Errorf("the page of a run whose history was dropped does not say so")
		}
	}
}

// TestLongSweepKeepsCountsNotEveryViolation: past scenarios.KeepInMemory runs, a
// sweep's summary keeps scenarios.SweepViolations violations per property and run,
// and every count.
func TestLongSweepKeepsCountsNotEveryViolation(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "--backend", "sim", "--scenario", "slow-holder", "--lock", "naive", "--seed", "1", "--repeat", fmt.Sprint(scenarios.KeepInMemory + 1), "--out", dir}
	var stdout, stderr strings.Builder
	if code := run(args, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum reports.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	trimmed := 0
	for _, c := range sum.Cells {
		for _, r := range c.Results {
			if len(r.Violations) > scenarios.SweepViolations {
				t.Fatalf("%s seed %d: %d violations of %s kept", c.Name(), c.RunSeed, len(r.Violations), r.Property)
			}
			if r.ViolationCount > len(r.Violations) {
				trimmed++
			}
		}
	}
	if trimmed == 0 {
		t.Errorf("no run had more violations than it kept: the test shows nothing")
	}
}

// TestRunBackendSimRejectsWhatCannotApply: a time scale other than 1 and
// the toxiproxy API mean nothing in the simulation, and replaying needs
// one; each says so.
func TestRunBackendSimRejectsWhatCannotApply(t *testing.T) {
	for _, args := range [][]string{{"--backend", "sim", "--time-scale", "2"}, {"--backend", "sim", "--toxiproxy-api", "127.0.0.1:0"},
		{"--backend", "process", "--replay-on", "process"}, {"--backend", "sim", "--replay-on", "sim"}} {
		var stdout, stderr strings.Builder
		code := run(append([]string{"run"}, args...), &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), "--backend sim") && !strings.Contains(stderr.String(), "real backend") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error saying why", args, code, stderr.String())
		}
	}
}

// TestReplayOnProcess replays a simulated finding on real redis-server:
// the same cell and seed, and whether the violation reproduced, in the
// table and summary.json.
func TestReplayOnProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real redis-server cells")
	}
	bin := lockchaosBinary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "run", "--backend", "sim", "--replay-on", "process", "--scenario", "gc-pause", "--lock", "token,fenced",
		"--seed", "5", "--out", dir)
	cmd.Env = append(os.Environ(), "CI=true")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "1 of 1 simulated finding(s) reproduced on process") {
		t.Errorf("no replay line:\n%s", out)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	validate(t, compileSchema(t, "summary.v2.json"), "summary.json", b)
	var sum reports.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Replays) != 1 {
		t.Fatalf("%d replays, want 1 (gc-pause/token; fenced found nothing): %+v", len(sum.Replays), sum.Replays)
	}
	r := sum.Replays[0]
	if r.Scenario != "gc-pause" || r.Lock != "token" || r.RunSeed != 5 || r.Backend != "process" || !r.Reproduced {
		t.Errorf("replay %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, r.History)); err != nil {
		t.Errorf("replay history: %v", err)
	}
	if html, _ := os.ReadFile(filepath.Join(dir, "index.html")); !strings.Contains(string(html), `id="replays"`) {
		t.Error("index.html does not show the replays")
	}
}
