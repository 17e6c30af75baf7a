package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bad input and interrupts of `lockchaos margins`: every flag is checked
// before anything runs, by the rules run follows.

// TestMarginsRefusesBadFlags: each bad value exits 2 before the search,
// with an error that names the flag, the value and what it wants. Each
// of these used to run a search: 0 as the default, NaN forever, an
// unknown --confirm-on on process, or an error only at the end.
func TestMarginsRefusesBadFlags(t *testing.T) {
	dir := t.TempDir()
	noMarkers := filepath.Join(dir, "no-markers.md")
	if err := os.WriteFile(noMarkers, []byte("# a README without the table's markers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--resolution", "NaN"}, "--resolution NaN: want a share of the TTL in 0.01..0.5"},
		{[]string{"--resolution", "+Inf"}, "--resolution +Inf: want a share of the TTL in 0.01..0.5"},
		{[]string{"--resolution", "1e-9"}, "--resolution 1e-09: want a share of the TTL in 0.01..0.5"},
		{[]string{"--resolution", "0"}, "--resolution 0: want"},
		{[]string{"--resolution", "0.9"}, "--resolution 0.9: want"},
		{[]string{"--cap", "0"}, "--cap 0: want a number of TTLs in 0.1..100"},
		{[]string{"--cap", "NaN"}, "--cap NaN: want"},
		{[]string{"--cap", "-Inf"}, "--cap -Inf: want"},
		{[]string{"--cap", "1000"}, "--cap 1000: want"},
		{[]string{"--time-scale", "NaN", "--confirm-on", "process"}, "--time-scale NaN: want 0 (measure) or a factor in 0.1..100"},
		{[]string{"--time-scale", "Inf", "--confirm-on", "process"}, "--time-scale +Inf: want"},
		{[]string{"--time-scale", "2"}, "--time-scale 2 with --backend sim and --confirm-on none: nothing runs on real Redis"},
		{[]string{"--seeds", "0"}, "--seeds 0: want 1..100000 seeds a batch"},
		{[]string{"--seeds", "1000000"}, "--seeds 1000000: want 1..100000"},
		{[]string{"--confirm-seeds", "0"}, "--confirm-seeds 0: want 1..100000"},
		{[]string{"--confirm-seeds", "0", "--backend", "process"}, "--confirm-seeds 0: want 1..100000"},
		{[]string{"--parallel", "0"}, "--parallel 0: want 1.."},
		{[]string{"--parallel", "100000"}, "--parallel 100000: want 1.."},
		{[]string{"--ttl", "0"}, "--ttl 0s: want a TTL in 10ms..1m0s"},
		{[]string{"--ttl", "1ns"}, "--ttl 1ns: want a TTL in 10ms..1m0s"},
		{[]string{"--ttl", "10000h"}, "--ttl 10000h0m0s: want a TTL in 10ms..1m0s"},
		{[]string{"--recovery-ttl", "-1s"}, "--recovery-ttl -1s: want a TTL in 10ms..1m0s"},
		{[]string{"--recovery-ttl", "0,300ms"}, "--recovery-ttl 0s,300ms: 0 skips the liveness margins, alone"},
		{[]string{"--recovery-ttl", "2h"}, "--recovery-ttl 2h0m0s: want a TTL in"},
		{[]string{"--confirm-on", "bogus"}, `--confirm-on "bogus": unknown (want process, docker or none)`},
		{[]string{"--confirm-on", "external"}, `--confirm-on "external": unknown (want process, docker or none)`},
		{[]string{"--backend", "external"}, `--backend "external": unknown (want sim, process or docker)`},
		{[]string{"--markdown", filepath.Join(dir, "missing.md")}, "--markdown " + filepath.Join(dir, "missing.md") + ": open "},
		{[]string{"--markdown", noMarkers}, "needs a line \"<!-- lockchaos:margins -->\""},
		{[]string{"--lock", ""}, "--lock '': name at least one lock"},
		{[]string{"--lock", "token,fenced,token"}, "--lock token,fenced,token: token given twice"},
		{[]string{"--family", "pause, pause"}, "--family pause, pause: pause given twice"},
		{[]string{"--out", ""}, "--out '': want a directory"},
	} {
		out := filepath.Join(dir, "out")
		args := append([]string{"margins", "--out", out}, c.args...)
		if !strings.Contains(strings.Join(c.args, " "), "--confirm-on") {
			args = append(args, "--confirm-on", "none")
		}
		code, stdout, stderr := runCLI(args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want %d with %q", c.args, code, stderr, exitUsage, c.want)
		}
		// Refused up front: no probe ran, nothing was printed.
		if _, err := os.Stat(filepath.Join(out, "probes")); err == nil || stdout != "" {
			t.Errorf("%v: the search ran before the refusal:\n%s", c.args, stdout)
		}
	}
}

// TestMarginsInterrupted: SIGINT exits 130 and SIGTERM 143 while a probe
// of many seeds runs (it exited 3, and a probe of a million seeds went
// on for seconds after SIGTERM), with the files of what was found.
func TestMarginsInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a search")
	}
	bin, _ := buildBinary(t, t.TempDir(), false)
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143} {
		out := t.TempDir()
		cmd := exec.Command(bin, "margins", "--lock", "token", "--family", "pause", "--confirm-on", "none",
			"--seeds", "100000", "--recovery-ttl", "0", "--out", out)
		cmd.Env = append(os.Environ(), "CI=true")
		var stderr lockedBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The first probe's runs write under probes/: the search is on.
		for deadline := time.Now().Add(60 * time.Second); !hasFiles(filepath.Join(out, "probes", "sim")); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("the search did not start: %s", stderr.String())
			}
		}
		_ = cmd.Process.Signal(sig)
		ended := make(chan struct{})
		go func() { _ = cmd.Wait(); close(ended) }()
		select {
		case <-ended:
		case <-time.After(30 * time.Second):
			// A bound on a hang, not a speed target.
			_ = cmd.Process.Kill()
			<-ended
			t.Fatalf("%v: still searching 30 s later:\n%s", sig, stderr.String())
		}
		if code := cmd.ProcessState.ExitCode(); code != want || !strings.Contains(stderr.String(), "lockchaos margins: interrupted (SIG") {
			t.Errorf("%v: exit %d, want %d\n%s", sig, code, want, stderr.String())
		}
		if _, err := os.Stat(filepath.Join(out, "margins.json")); err != nil {
			t.Errorf("%v: margins.json not written: %v", sig, err)
		}
	}
}

// TestMarginsInterruptedWhileCalibrating: SIGINT while margins measures
// the confirming Redis exits 130 (it exited 3, "calibration: context
// canceled"), and leaves no redis-server behind.
func TestMarginsInterruptedWhileCalibrating(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts redis-server")
	}
	bin, _ := buildBinary(t, t.TempDir(), false)
	tmp := t.TempDir()
	cmd := exec.Command(bin, "margins", "--lock", "token", "--family", "pause", "--confirm-on", "process",
		"--recovery-ttl", "0", "--out", t.TempDir())
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "CI=true")
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Calibration starts the first redis-server: signal as it appears.
	for deadline := time.Now().Add(30 * time.Second); len(redisServersUnder(tmp)) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("calibration did not start a node: %s", stderr.String())
		}
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 || strings.Contains(stderr.String(), "context canceled") {
		t.Errorf("SIGINT while calibrating: exit %d, want 130\n%s", code, stderr.String())
	}
	if pids := redisServersUnder(tmp); len(pids) > 0 {
		t.Errorf("redis-server still running from %s: %v", tmp, pids)
	}
}

// hasFiles says dir exists and holds something.
func hasFiles(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) > 0
}
