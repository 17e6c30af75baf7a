package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/lockimpl"
)

// TestLinesAreTheProtocolsJSON: the hand-built lines are single-line JSON
// objects with the protocol's fields, whatever the strings hold.
func TestLinesAreTheProtocolsJSON(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/stdout")
	if err != nil {
		t.Fatal(err)
	}
	w := &writer{f: f}
	odd := "quote \" backslash \\ newline \n tab \t nul \x00 <html> & é \u2028 bad utf-8 \xff"
	w.hello("lockchaos token")
	w.hello(odd)
	w.granted(1, 7, "4f2c0a1b", 12)
	w.granted(2, 8, odd, 0)
	w.answer(3, nil, lockimpl.ErrNotHeld)
	w.answer(4, fmt.Errorf("wrapped: %w", lockimpl.ErrNotAcquired), lockimpl.ErrNotAcquired)
	w.answer(5, errors.New(odd), lockimpl.ErrNotHeld)
	w.answer(6, errors.New("unknown op x"), nil)
	w.lost(9)
	f.Close()
	out, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	oddJSON, _ := json.Marshal(odd)
	var oddBack string
	_ = json.Unmarshal(oddJSON, &oddBack)
	want := []map[string]any{
		{"hello": "lockchaos-driver", "version": 1.0, "name": "lockchaos token"},
		{"hello": "lockchaos-driver", "version": 1.0, "name": oddBack},
		{"id": 1.0, "result": "ok", "lease": 7.0, "token": "4f2c0a1b", "fence": 12.0},
		{"id": 2.0, "result": "ok", "lease": 8.0, "token": oddBack, "fence": 0.0},
		{"id": 3.0, "result": "ok"},
		{"id": 4.0, "result": "refused"},
		{"id": 5.0, "result": "error", "error": oddBack},
		{"id": 6.0, "result": "error", "error": "unknown op x"},
		{"lost": 9.0},
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, l := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("line %d %q: %v", i+1, l, err)
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("line %d %q:\n got %v\nwant %v", i+1, l, got, want[i])
		}
	}
}

// TestSysmonDebugInPlace: the driver re-executes itself with sysmonDebug
// in GODEBUG, keeping the rest of GODEBUG, in the same process (the
// harness signals its pid and process group), and leaves a GODEBUG that
// sets schedtrace alone.
func TestSysmonDebugInPlace(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "lockchaos-driver")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for godebug, want := range map[string]string{
		"":               "GODEBUG=" + sysmonDebug,
		"madvdontneed=1": "GODEBUG=madvdontneed=1," + sysmonDebug,
		"schedtrace=0":   "GODEBUG=schedtrace=0",
	} {
		cmd := exec.Command(bin, "--lock", "token")
		cmd.Env = append(os.Environ(), "LOCKCHAOS_ADDRS=127.0.0.1:1", "LOCKCHAOS_TTL_MS=1000", "GODEBUG="+godebug)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		hello, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || !strings.Contains(hello, `"hello":"lockchaos-driver"`) {
			t.Fatalf("GODEBUG=%q: hello %q, %v", godebug, hello, err)
		}
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, kv := range strings.Split(string(environ), "\x00") {
			if strings.HasPrefix(kv, "GODEBUG=") {
				got = append(got, kv)
			}
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("GODEBUG=%q: the driver (pid %d, the one started) runs with %q, want %q", godebug, cmd.Process.Pid, got, want)
		}
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("GODEBUG=%q: %v", godebug, err)
		}
	}
}
