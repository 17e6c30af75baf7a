package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/scenarios"
)

// Bad input, bounds and interrupts of `lockchaos run`: what a careless or
// hostile command line meets.

// buildBinary returns the built lockchaos (built once for the package:
// binaries) and, with driver, the Go driver, both linked into dir (a test
// may want their paths to hold a space, or dir on PATH).
func buildBinary(t *testing.T, dir string, driver bool) (string, string) {
	t.Helper()
	bin, drv := binaries(t)
	if !driver {
		return bin, ""
	}
	for _, p := range []*string{&bin, &drv} {
		link := filepath.Join(dir, filepath.Base(*p))
		if err := os.Symlink(*p, link); err != nil {
			t.Fatal(err)
		}
		*p = link
	}
	return bin, drv
}

// lockedBuffer is an io.Writer a test may read while a process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestScenariosFileIsBounded(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	body := "scenarios:\n  - name: tiny\n    expect: {token: safe}\n"
	if err := os.WriteFile(small, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(n int64) { scenarios.MaxFileSize = n }(scenarios.MaxFileSize)
	scenarios.MaxFileSize = int64(len(body))
	if _, err := scenarios.ReadFile(small); err != nil {
		t.Fatalf("a file of exactly the limit: %v", err)
	}
	scenarios.MaxFileSize = int64(len(body)) - 1
	if _, err := loadCatalog([]string{small}, nil); err == nil ||
		!strings.Contains(err.Error(), fmt.Sprintf("--scenarios-file %s: larger than %d bytes", small, len(body)-1)) {
		t.Fatalf("a file over the limit: %v", err)
	}
	scenarios.MaxFileSize = 16 << 20
	// /dev/zero never ends: the run reads 16 MiB of it and says so.
	for _, cmd := range []string{"run", "list"} {
		start := time.Now()
		code, _, stderr := runCLI(cmd, "--scenarios-file", "/dev/zero")
		if code != exitUsage || !strings.Contains(stderr, "--scenarios-file /dev/zero: larger than 16 MiB") || time.Since(start) > 10*time.Second {
			t.Errorf("%s --scenarios-file /dev/zero: exit %d in %v, %q", cmd, code, time.Since(start), stderr)
		}
	}
	if code, _, stderr := runCLI("run", "--scenarios-file", filepath.Join(dir, "missing.yaml")); code != exitUsage ||
		!strings.Contains(stderr, "lockchaos run: --scenarios-file "+filepath.Join(dir, "missing.yaml")+": open "+filepath.Join(dir, "missing.yaml")) {
		t.Errorf("a missing file: exit %d, %q", code, stderr)
	}
}

// TestNotStartedRunsAreKnown holds results.Cell.NotStarted to what
// scenarios.Execute says of a run whose context was cancelled first.
func TestNotStartedRunsAreKnown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sc, _ := scenarios.Get("baseline")
	token, _ := lockimpl.Lookup("token")
	if r := scenarios.RunCell(ctx, scenarios.Cell{Scenario: sc, Lock: token, Expect: scenarios.Safe.Expected()}, scenarios.Options{Backend: process.Backend{}}); !r.NotStarted() {
		t.Fatalf("a run cancelled before it started: %s %q", r.Outcome, r.Error)
	}
}

// TestInterruptedSweepSaysOnceWhatDidNotStart: SIGINT early in a long
// simulated sweep prints one line for the runs it kept from starting, not
// one each (a --repeat 1000000000 sweep printed 10.4 million), and still
// writes the summary.
func TestInterruptedSweepSaysOnceWhatDidNotStart(t *testing.T) {
	bin, _ := buildBinary(t, t.TempDir(), false)
	out := t.TempDir()
	cmd := exec.Command(bin, "run", "--backend", "sim", "--scenario", "baseline", "--lock", "token", "--repeat", "5000",
		"--parallel", "1", "--seed", "1", "--out", out)
	cmd.Env = append(os.Environ(), "CI=true")
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(stderr.String(), "[3/5000]"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the sweep did not get going: %s", stderr.String())
		}
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr.String())
	}
	all := stdout.String() + stderr.String()
	if n := strings.Count(all, "interrupted before it ran"); n > 0 {
		t.Errorf("%d lines for runs that never started:\n%.2000s", n, all)
	}
	if !strings.Contains(stderr.String(), " run(s) not started (interrupted)") || !strings.Contains(stdout.String(), " run(s) not started: interrupted") {
		t.Errorf("no one line for the runs not started:\n%s\n%s", stderr.String(), stdout.String())
	}
	if sum, err := reports.ReadJSON(filepath.Join(out, "summary.json")); err != nil || !sum.Interrupted || len(sum.Cells) != 5000 {
		t.Fatalf("summary: %v", err)
	}
}

// TestParallelIsBounded: --parallel beyond maxParallel is an error, and
// below it never starts more cells at once than there are runs (it used
// to start a goroutine per --parallel: 4.7 GB for --parallel 1000000).
func TestParallelIsBounded(t *testing.T) {
	code, _, stderr := runCLI("run", "--parallel", "1000000")
	if code != exitUsage || !strings.Contains(stderr, "--parallel 1000000: at most ") {
		t.Errorf("--parallel 1000000: exit %d, %q", code, stderr)
	}
	code, stdout, stderr := runCLI("run", "--backend", "sim", "--scenario", "baseline", "--lock", "token,naive",
		"--parallel", "200", "--out", t.TempDir())
	if code != exitOK || !strings.Contains(stderr, "2 cell(s) x 1, seed") || !strings.Contains(stderr, ", parallel 2,") {
		t.Errorf("--parallel 200 for 2 runs: exit %d\n%s\n%s", code, stderr, stdout)
	}
	if code, _, stderr := runCLI("run", "--repeat", "1000000000"); code != exitUsage || !strings.Contains(stderr, "--repeat 1000000000: at most 100000 runs") {
		t.Errorf("--repeat 1000000000: exit %d, %q", code, stderr)
	}
	// 9 scenarios' cells x 20000 runs: over the bound, said before anything runs.
	if code, _, stderr := runCLI("run", "--backend", "sim", "--repeat", "20000"); code != exitUsage || !strings.Contains(stderr, "x 20000 is ") {
		t.Errorf("--repeat 20000 of the matrix: exit %d, %q", code, stderr)
	}
}

// TestInterruptDuringCalibration: SIGINT or SIGTERM while the run
// measures the machine (its first ~0.3 s) exits 130 or 143 with a
// summary, not 3 with "redis-server did not start ... context canceled"
// and a Redis log.
func TestInterruptDuringCalibration(t *testing.T) {
	bin, _ := buildBinary(t, t.TempDir(), false)
	// The last: a simulated finding's replay measures the real backend
	// first (the simulation starts no redis-server, so the first is the
	// replay's calibration).
	replay := []string{"--backend", "sim", "--scenario", "gc-pause", "--lock", "token", "--replay-on", "process", "--seed", "1"}
	for i, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGINT, syscall.SIGTERM, syscall.SIGINT} {
		tmp, out := t.TempDir(), t.TempDir()
		args := []string{"--backend", "process", "--scenario", "baseline", "--lock", "token", "--duration", "300ms"}
		if i == 4 {
			args = replay
		}
		cmd := exec.Command(bin, append(append([]string{"run"}, args...), "--out", out)...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "CI=true")
		var stdout, stderr lockedBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Calibration starts the first redis-server: signal as it appears.
		for deadline := time.Now().Add(20 * time.Second); len(redisServersUnder(tmp)) == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("calibration did not start a node: %s", stderr.String())
			}
		}
		_ = cmd.Process.Signal(sig)
		_ = cmd.Wait()
		want := map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143}[sig]
		if code := cmd.ProcessState.ExitCode(); code != want || strings.Contains(stderr.String(), "did not start") ||
			strings.Contains(stderr.String(), "replay on process:") {
			t.Fatalf("%v during calibration (%v): exit %d, want %d\n%s", sig, args, code, want, stderr.String())
		}
		if i == 4 {
			continue // the matrix ran: its summary is the usual one
		}
		if strings.Contains(stderr.String(), "machine now:") {
			t.Logf("%v: arrived after calibration:\n%s", sig, stderr.String())
		} else if !strings.Contains(stderr.String(), "1 run(s) not started (interrupted)") {
			t.Errorf("%v: does not say what did not start:\n%s", sig, stderr.String())
		} else if strings.Contains(stdout.String(), "time scale 1.00") || !strings.Contains(stdout.String(), "time scale not measured") {
			t.Errorf("%v: claims a time scale calibration never measured:\n%s", sig, stdout.String())
		}
		sum, err := reports.ReadJSON(filepath.Join(out, "summary.json"))
		if err != nil || !sum.Interrupted || !strings.Contains(stdout.String(), "wrote ") {
			t.Fatalf("%v: summary %v %+v\n%s", sig, err, sum, stdout.String())
		}
		b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
		validate(t, compileSchema(t, "summary.v2.json"), "summary.json", b)
		if pids := redisServersUnder(tmp); len(pids) > 0 {
			t.Fatalf("%v: redis-server still running from %s: %v", sig, tmp, pids)
		}
	}
}

// TestOutAndProfileAreUsageErrors: an --out that cannot hold the reports
// and a --cpuprofile that cannot be written are usage errors (2), found
// before a backend is chosen or the machine calibrated.
func TestOutAndProfileAreUsageErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--out", file}, "--out " + file + ": mkdir " + file + ": not a directory"},
		{[]string{"--out", filepath.Join(file, "sub")}, "--out " + filepath.Join(file, "sub") + ": mkdir"},
		{[]string{"--out", ""}, "--out '': want a directory"},
		{[]string{"--out", "/proc/self"}, "not lockchaos output"}, // never written into, not even by root
		{[]string{"--out", t.TempDir(), "--cpuprofile", filepath.Join(file, "p")}, "--cpuprofile: open " + filepath.Join(file, "p")},
	} {
		args := append([]string{"run", "--backend", "process", "--scenario", "baseline", "--lock", "token"}, c.args...)
		code, _, stderr := runCLI(args...)
		if code != exitUsage || !strings.Contains(stderr, c.says) || strings.Contains(stderr, "lockchaos dev:") {
			t.Errorf("%v: exit %d, %q; want %d and %q, before anything runs", c.args, code, stderr, exitUsage, c.says)
		}
	}
}

// TestUnknownLockSaysHowToDeclareOne: `--lock rb` without its driver says
// how a lock of one's own is declared.
func TestUnknownLockSaysHowToDeclareOne(t *testing.T) {
	code, _, stderr := runCLI("run", "--scenario", "baseline", "--lock", "rb", "--seed", "1")
	for _, want := range []string{`unknown lock "rb" (valid: `, "--lock-driver NAME=COMMAND", "--scenarios-file"} {
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, %q; want %d and %q", code, stderr, exitUsage, want)
		}
	}
}

// TestDriverLockRerunLineReruns: the rerun line of a --lock-driver cell,
// pasted into a shell, reruns that cell with the same settings (its line
// comes out the same), the driver's path with a space in it.
func TestDriverLockRerunLineReruns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my tools")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, driver := buildBinary(t, dir, true)
	rerunOf := func(out string) string {
		sum, err := reports.ReadJSON(filepath.Join(out, "summary.json"))
		if err != nil || len(sum.Cells) != 1 {
			t.Fatalf("summary: %v %+v", err, sum)
		}
		return sum.Cells[0].Rerun
	}
	first := t.TempDir()
	code, stdout, stderr := runCLI("run", "--scenario", "baseline", "--lock", "proc-token", "--lock-driver",
		"proc-token='"+driver+"' --lock token", "--duration", "500ms", "--seed", "11", "--budget", "20s", "--min-cycles", "2",
		"--out", first)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	line := rerunOf(first)
	for _, want := range []string{"--lock-driver 'proc-token='\\''", "--budget 20s", "--min-cycles 2", "--duration 500ms"} {
		if !strings.Contains(line, want) {
			t.Errorf("rerun line %s lacks %s", line, want)
		}
	}
	again := t.TempDir()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = again
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "CI=true")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rerun %s: %v\n%s", line, err, out)
	}
	if got := rerunOf(filepath.Join(again, "out", "chaos")); got != line {
		t.Errorf("the rerun's own line differs:\n %s\n %s", got, line)
	}
}

// TestRedisImageWithAutoMeansDocker: --redis-image under --backend auto
// runs containers (or says why it cannot), never silently processes.
func TestRedisImageWithAutoMeansDocker(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no-docker.sock"))
	code, stdout, stderr := runCLI("run", "--redis-image", "redis:7", "--scenario", "baseline", "--lock", "token",
		"--duration", "300ms", "--out", t.TempDir())
	if code != exitHarness || !strings.Contains(stderr, "no-docker.sock") || strings.Contains(stderr, "backend process") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}
