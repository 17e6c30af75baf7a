package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/lockchaos/lockchaos/choose"
)

// Bad input to `lockchaos choose` exits 2 before anything runs, naming
// the flag and what it wants.
func TestChooseRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	noMarkers := filepath.Join(dir, "plain.md")
	notMargins := filepath.Join(dir, "margins.json")
	for path, text := range map[string]string{noMarkers: "# no markers\n", notMargins: "{\"format\": 99}\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--backend", "sim"}, "--backend sim: the table measures real servers"},
		{[]string{"--backend", "bogus"}, `unknown backend "bogus" (valid:`},
		{[]string{"--lock", "nosuch"}, "nosuch"},
		{[]string{"--scenario", "nosuch"}, "nosuch"},
		{[]string{"--seeds", "-1"}, "--seeds -1"},
		{[]string{"--parallel", "0"}, "--parallel 0"},
		{[]string{"--markdown", filepath.Join(dir, "missing.md")}, "--markdown"},
		{[]string{"--markdown", noMarkers}, choose.FullStart},
		{[]string{"--margins", notMargins}, "has format 99"},
		{[]string{"--margins", filepath.Join(dir, "none.json")}, "--margins"},
		{[]string{"--lock", "token", "--scenario", "etcd-baseline"}, "no cell matches"},
		{[]string{"extra"}, "unknown command"},
	} {
		code, _, stderr := runCLI(append([]string{"choose", "--out", filepath.Join(dir, "out")}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("choose %v: exit %d, want 2 and %q in:\n%s", c.args, code, c.want, stderr)
		}
	}
}

// The short table on real servers, the user's own lock (a driver
// process) beside two built-in ones: the paused token holder is caught,
// the fenced lock is not, every row's cost is measured beside its
// floor, and every output is written: choose.json (valid against its
// schema), the HTML with its plots, and both Markdown forms into the
// file's markers.
func TestChooseQuickTableWithTheUsersLock(t *testing.T) {
	_, driver := binaries(t)
	dir := t.TempDir()
	out, md := filepath.Join(dir, "out"), filepath.Join(dir, "README.md")
	readme := "# mine\n\n" + choose.ShortStart + "\n" + choose.ShortEnd + "\n\n" + choose.FullStart + "\nold\n" + choose.FullEnd + "\n"
	if err := os.WriteFile(md, []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
	// The binary, not in process: a --lock-driver registers its lock
	// for the whole process, and other tests list the registry.
	cmd := exec.Command(lockchaosBinary(t), "choose", "--quick", "--parallel", "2", "--seed", "7", "--out", out, "--markdown", md, "--json",
		"--lock", "token,fenced,mine", "--lock-driver", "mine="+driver+" --lock token", "--scenario", "baseline,gc-pause")
	var outb, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &outb, &errb
	err := cmd.Run()
	stdout, stderr := outb.String(), errb.String()
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	validate(t, compileSchema(t, "choose.v1.json"), "choose --json", []byte(stdout))
	var tab choose.Table
	if err := json.Unmarshal([]byte(stdout), &tab); err != nil {
		t.Fatal(err)
	}
	rows := map[string]*choose.Row{}
	for _, r := range tab.Rows {
		rows[r.Name] = r
	}
	if c := rows["token"].Cell("paused holder"); c == nil || c.Unsafe != 1 || c.Runs != 1 {
		t.Errorf("token paused holder: %+v, want unsafe 1/1", c)
	}
	if c := rows["fenced"].Cell("paused holder"); c == nil || c.Unsafe != 0 || c.Runs != 1 {
		t.Errorf("fenced paused holder: %+v, want safe 0/1", c)
	}
	mine := rows["mine"]
	if mine == nil || !mine.User || mine.Sentence == "" {
		t.Fatalf("the user's lock: %+v", mine)
	}
	for _, r := range tab.Rows {
		c := r.Cost
		if c == nil || c.Error != "" || c.FloorOp != "PING" || c.FloorP50 <= 0 || c.RatioP50 < 1 || c.Contended <= 0 {
			t.Errorf("%s: cost %+v, want a cycle over a measured PING and a contended figure", r.Name, c)
		}
	}
	if mine.Cost != nil && rows["token"].Cost != nil && mine.Cost.CycleP50 <= rows["token"].Cost.CycleP50 {
		t.Errorf("a driver process's cycle (%v) costs no more than the same lock in process (%v)", mine.Cost.CycleP50,
			rows["token"].Cost.CycleP50)
	}
	for _, f := range []string{"choose.json", "choose.md", "choose.html", "cost.svg", "summary.json", "junit.xml"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| `token` | 1 Redis | nothing | **unsafe**: paused holder", "| `fenced` | 1 Redis | checks a fence",
		"**Liveness and cost.**", "- `mine`: "} {
		if !strings.Contains(string(b), want) {
			t.Errorf("README lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "\nold\n") {
		t.Error("the old table is still between the markers")
	}
}

// A cell that disagrees with its lock's expectation fails the gate: exit
// 1, the cell named on stdout with its rerun line.
func TestChooseDisagreementExitsOne(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "wrong.yaml")
	yaml := "scenarios:\n  - name: wrong-baseline\n    description: no faults, expected unsafe (a wrong expectation)\n" +
		"    expect:\n      token: unsafe\n"
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI("choose", "--quick", "--no-cost", "--seed", "3", "--out", filepath.Join(dir, "out"),
		"--scenarios-file", file, "--scenario", "wrong-baseline", "--lock", "token")
	if code != exitViolation || !strings.Contains(stdout, "DISAGREES token [no faults]") ||
		!strings.Contains(stdout, "wrong-baseline/token") || !strings.Contains(stdout, "rerun: lockchaos run") {
		t.Fatalf("exit %d, want 1 naming the cell\n%s\n%s", code, stdout, stderr)
	}
}

// SIGINT or SIGTERM mid-table: exit 130 or 143, the table of what ran
// written, no server left behind.
func TestChooseInterruptStopsCleanly(t *testing.T) {
	bin := lockchaosBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		tmp, out := t.TempDir(), t.TempDir()
		interruptMidRun(t, sig, tmp, out, bin, "choose", "--quick", "--scenario", "baseline,gc-pause", "--lock", "token",
			"--out", out)
		b, err := os.ReadFile(filepath.Join(out, "choose.json"))
		var tab choose.Table
		if err != nil || json.Unmarshal(b, &tab) != nil || !tab.Interrupted {
			t.Fatalf("%v: the interrupted table: %v\n%s", sig, err, b)
		}
		if pids := redisServersUnder(tmp); len(pids) > 0 {
			t.Fatalf("%v: redis-server still running from %s: %v", sig, tmp, pids)
		}
	}
}
