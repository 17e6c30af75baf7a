package drivers_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/drivers"
	"github.com/lockchaos/lockchaos/results"
)

// buildC compiles drivers/c/NAME.c as the Makefile does, with warnings
// as errors: the C drivers are examples and claim to build clean. A
// machine without a C compiler skips (CI must have one).
func buildC(t *testing.T, name string) string {
	t.Helper()
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no C compiler (%s) in CI: %v", cc, err)
		}
		t.Skipf("the C drivers need a C compiler: apt-get install gcc, or set CC (%v)", err)
	}
	bin := filepath.Join(t.TempDir(), name)
	out, err := exec.Command(cc, "-O2", "-Wall", "-Wextra", "-Werror", "-o", bin, filepath.Join("c", name+".c")).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s.c: %v\n%s", cc, name, err, out)
	}
	return bin
}

// TestCDriverRunsTheTokenLockInAProcess: the C token lock keeps mutual
// exclusion without faults and, paused by SIGSTOP, loses it, as the Go
// driver's token lock does; no driver process is left after either cell.
func TestCDriverRunsTheTokenLockInAProcess(t *testing.T) {
	d := drivers.Driver{Name: "c-token", Command: buildC(t, "lockchaos-cdriver")}
	res := run(t, d, "baseline", results.Safe)
	t.Log(res.Summary())
	if res.Outcome != results.Met {
		t.Fatalf("baseline: %s", res.Summary())
	}
	res = run(t, d, "gc-pause", results.Unsafe)
	t.Log(res.Summary())
	if res.Outcome != results.Met || res.Violations == 0 {
		t.Fatalf("gc-pause by SIGSTOP: %s", res.Summary())
	}
}

// TestAnswerOnlyDriverIsNoLock: the pipes' floor of `make bench-drivers`
// grants every request without Redis, so two pods hold a key at once even
// with no fault, and the checker says so: the driver works, and it is
// plainly not a lock.
func TestAnswerOnlyDriverIsNoLock(t *testing.T) {
	d := drivers.Driver{Name: "answer-only", Command: buildC(t, "answer-only")}
	res := run(t, d, "baseline", results.Unsafe)
	t.Log(res.Summary())
	if res.Outcome != results.Met || res.Violations == 0 {
		t.Fatalf("baseline: %s", res.Summary())
	}
}

// TestCDriverReleaseScriptIsLockimpls: the C driver carries the release
// script as a string literal (no code generator to build it); it must be
// lockimpl's script byte for byte, or the C token lock is another lock.
func TestCDriverReleaseScriptIsLockimpls(t *testing.T) {
	want, err := os.ReadFile("../lockimpl/scripts/release.lua")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("c/lockchaos-cdriver.c")
	if err != nil {
		t.Fatal(err)
	}
	got, err := cStringLiteral(string(src), "static const char release_lua[] =")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal([]byte(got), want) {
		t.Fatalf("drivers/c/lockchaos-cdriver.c's release_lua differs from lockimpl/scripts/release.lua:\n--- C\n%s\n--- lua\n%s", got, want)
	}
}

// cStringLiteral returns the value of the literal that follows decl: one
// quoted piece per line, ending with ';'. C's escapes \" \\ \n read as Go's.
func cStringLiteral(src, decl string) (string, error) {
	i := strings.Index(src, decl)
	if i < 0 {
		return "", fmt.Errorf("no %q", decl)
	}
	var b strings.Builder
	for _, line := range strings.Split(src[i+len(decl):], "\n")[1:] {
		line = strings.TrimSpace(line)
		end := strings.HasSuffix(line, ";")
		s, err := strconv.Unquote(strings.TrimSuffix(line, ";"))
		if err != nil {
			return "", fmt.Errorf("%q: not one quoted piece: %w", line, err)
		}
		b.WriteString(s)
		if end {
			return b.String(), nil
		}
	}
	return "", fmt.Errorf("%q: no ';'", decl)
}
