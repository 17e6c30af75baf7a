package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/shellword"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
)

// check and report asked for no signals: started with SIGINT ignored (a
// script's background job, `lockchaos check H &`), SIGINT did nothing and
// they ran to the end with exit 0; on a FIFO nobody writes, forever. Now
// both exit 130 or 143, whatever they were started with.

// stalledHistory makes a FIFO and a writer that sends a valid history's
// first lines and then holds it open: a reader waits for more for good.
// It returns the FIFO's path; the writer ends with the test.
func stalledHistory(t *testing.T, dir string) string {
	t.Helper()
	whole := filepath.Join(dir, "whole.jsonl")
	h := &history.History{Header: history.Header{Format: history.FormatVersion, Scenario: "s", Lock: "token", Clients: 1,
		Keys: []string{"k"}, Fencing: history.FencingOff}, End: 2000}
	h.Events = append(h.Events, history.Event{ID: 0, Kind: history.Acquire, Client: 0, Key: "k", Call: 0, Return: 1000,
		Outcome: history.Ok, Token: "t"})
	if err := history.WriteFile(whole, h); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "history.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until the reader opens it
		if err != nil {
			return
		}
		defer f.Close()
		_, _ = f.Write(b[:strings.IndexByte(string(b), '\n')+1])
		<-stop
	}()
	return fifo
}

// runInterrupted starts bin with args under `sh` with SIGINT ignored, sends
// sig once it has input open, and returns its exit code and stderr.
func runInterrupted(t *testing.T, bin string, sig syscall.Signal, input string, args ...string) (int, string) {
	t.Helper()
	line := "trap '' INT; exec " + shellword.Quote(bin)
	for _, a := range args {
		line += " " + shellword.Quote(a)
	}
	cmd := exec.Command("sh", "-c", line)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Once it has its input open it is blocked on it, and already hears
	// signals (check and report ask for them before they read).
	if !hasOpen(cmd.Process.Pid, input, 30*time.Second) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("%v %v: %s not opened in 30 s:\n%s", bin, args, input, stderr.String())
	}
	_ = cmd.Process.Signal(sig)
	ended := make(chan struct{})
	go func() { _ = cmd.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(30 * time.Second): // a bound on a hang, not a speed target
		_ = cmd.Process.Kill()
		<-ended
		t.Fatalf("%v %v: still running 30 s after %v:\n%s", bin, args, sig, stderr.String())
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// hasOpen polls until process pid has path open; false after timeout.
func hasOpen(pid int, path string, timeout time.Duration) bool {
	fds := fmt.Sprintf("/proc/%d/fd", pid)
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		entries, _ := os.ReadDir(fds)
		for _, e := range entries {
			if target, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && target == path {
				return true
			}
		}
	}
	return false
}

func TestCheckAndReportHearInterrupts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin, _ := buildBinary(t, t.TempDir(), false)
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143} {
		t.Run(fmt.Sprintf("check/%v", sig), func(t *testing.T) {
			fifo := stalledHistory(t, t.TempDir())
			code, stderr := runInterrupted(t, bin, sig, fifo, "check", fifo)
			if code != want || !strings.Contains(stderr, "lockchaos check: interrupted") {
				t.Errorf("exit %d, want %d:\n%s", code, want, stderr)
			}
		})
		t.Run(fmt.Sprintf("report/%v", sig), func(t *testing.T) {
			dir := t.TempDir()
			fifo := stalledHistory(t, dir)
			s := &reports.Summary{Format: reports.FormatVersion, Seed: 1, Repeat: 1,
				Cells: []*results.Cell{{Scenario: "s", Lock: "token", Expect: results.Safe, Verdict: "pass", Outcome: results.Met,
					History: "history.jsonl"}}}
			s.Tally()
			if _, err := reports.WriteJSON(dir, s); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "pages")
			code, stderr := runInterrupted(t, bin, sig, fifo, "report", "--out", out, dir)
			if code != want || !strings.Contains(stderr, "lockchaos report: interrupted") {
				t.Errorf("exit %d, want %d:\n%s", code, want, stderr)
			}
			if pages, _ := filepath.Glob(filepath.Join(out, "cells", "*.html")); len(pages) > 0 {
				t.Errorf("a page whose history never came was written: %v", pages)
			}
		})
	}
}
