// Package probetest makes fake programs that hang, for tests of what runs
// external programs: each starts a child first, so a test can check that
// the child died with it.
package probetest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Fake is a script standing in for a program.
type Fake struct {
	Path    string // the script, named as the program it fakes
	PidFile string // where it writes its child's pid once the child runs
}

// Hanging writes a script named name that starts a child (a long sleep),
// writes the child's pid, then runs body (a long sleep if ""): it never
// answers.
func Hanging(t testing.TB, name, body string) Fake {
	t.Helper()
	dir := t.TempDir()
	f := Fake{Path: filepath.Join(dir, name), PidFile: filepath.Join(dir, "child.pid")}
	if body == "" {
		body = "sleep 86400"
	}
	script := "#!/bin/sh\nsleep 86401 &\necho $! > " + f.PidFile + ".tmp; mv " + f.PidFile + ".tmp " + f.PidFile + "\n" + body + "\n"
	if err := os.WriteFile(f.Path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

// Started reports whether the fake got as far as starting its child.
func (f Fake) Started() bool {
	_, err := os.Stat(f.PidFile)
	return err == nil
}

// Child waits until the fake has started its child and returns its pid.
func (f Fake) Child(t testing.TB) int {
	t.Helper()
	for range 3000 {
		if b, err := os.ReadFile(f.PidFile); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never started its child", f.Path)
	return 0
}

// ChildGone fails t unless the fake's child has ended (gone, or a zombie
// nobody reaps). SIGKILL lands when the kernel next runs the process, not
// at once, so it waits a moment; it kills the child itself before failing.
func (f Fake) ChildGone(t testing.TB) {
	t.Helper()
	pid := f.Child(t)
	for range 500 {
		if !alive(pid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("the child %d of %s outlived it", pid, f.Path)
}

// alive reports whether pid runs: it exists and is no zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// Retry calls try with a limit that grows fourfold until the fake has
// started its child before the limit passed (a loaded machine can take a
// while to start a shell), up to a minute; it returns the last limit.
func Retry(f Fake, first time.Duration, try func(limit time.Duration)) time.Duration {
	limit := first
	for ; ; limit *= 4 {
		try(limit)
		if f.Started() || limit > 15*time.Second {
			return limit
		}
	}
}
