package drivers_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/drivers"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
	"github.com/lockchaos/lockchaos/service/postgres"
)

var goDriver string // the built lockchaos-driver binary

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lockchaos-driver-test-")
	if err != nil {
		panic(err)
	}
	goDriver = filepath.Join(dir, "lockchaos-driver")
	if out, err := exec.Command("go", "build", "-o", goDriver, "../cmd/lockchaos-driver").CombinedOutput(); err != nil {
		panic(string(out))
	}
	backendtest.MainWith(m, func() { os.RemoveAll(dir) })
}

func short(t *testing.T, name string, d time.Duration) scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	s.Duration = d
	return s
}

func run(t *testing.T, d drivers.Driver, scenario string, expect results.Expectation) *results.Cell {
	t.Helper()
	dir := t.TempDir()
	res := scenarios.Run(context.Background(), short(t, scenario, time.Second), d.Spec(), expect,
		scenarios.Options{Backend: process.Backend{}, Seed: 3, OutDir: dir, TimeScale: 1, MaxDuration: 3 * time.Second})
	if left := driverProcesses(); len(left) > 0 {
		t.Fatalf("driver processes left after the cell: %v", left)
	}
	return res
}

// driverProcesses lists live processes that are ours (children) and
// drivers: none may outlive a cell.
func driverProcesses() []string {
	me := os.Getpid()
	var out []string
	for _, p := range backendtest.Processes() {
		if p.PPid == me && p.State != "Z" && !strings.HasPrefix(p.Comm, "redis-server") {
			out = append(out, fmt.Sprintf("%d (%s)", p.Pid, p.Comm))
		}
	}
	return out
}

// TestGoDriverRunsABuiltInLockInAProcess: the token lock as a driver
// process keeps mutual exclusion without faults and, paused by a real
// SIGSTOP of its process, loses it as the in-process one does.
func TestGoDriverRunsABuiltInLockInAProcess(t *testing.T) {
	d := drivers.Driver{Name: "proc-token", Command: goDriver + " --lock token"}
	if res := run(t, d, "baseline", results.Safe); res.Outcome != results.Met {
		t.Fatalf("baseline: %s", res.Summary())
	}
	if res := run(t, d, "gc-pause", results.Unsafe); res.Outcome != results.Met || res.Violations == 0 {
		t.Fatalf("gc-pause by SIGSTOP: %s", res.Summary())
	}
}

// TestCrashedDriverIsKilledAndRestarted: a pod-crash SIGKILLs a driver
// pod's whole process group, and its restart starts a new driver process
// that goes on acquiring; the key its dead predecessor held is freed by
// its TTL, and no process is left behind.
func TestCrashedDriverIsKilledAndRestarted(t *testing.T) {
	d := drivers.Driver{Name: "proc-token", Command: goDriver + " --lock token"}
	res := run(t, d, "pod-crash-restart", results.Safe)
	if res.Outcome != results.Met || res.LivenessVerdict != checker.Pass {
		t.Fatalf("pod-crash-restart: %s", res.Summary())
	}
	crashed := map[int]int64{}
	reacquired := 0
	for _, e := range history.ByCall(res.Checked) {
		switch {
		case e.Kind == history.Abandon && e.Err == history.Crashed:
			crashed[e.Client] = e.Call
		case e.Kind == history.Acquire && e.Outcome == history.Ok:
			if at, ok := crashed[e.Client]; ok && e.Call > at {
				reacquired++
				delete(crashed, e.Client)
			}
		}
	}
	if reacquired == 0 {
		t.Fatalf("no crashed driver pod acquired again after its restart: %s", res.Summary())
	}
}

// TestBadDriversAreClearCellErrors: every way a driver can go wrong ends
// its cell with an error naming the driver and quoting its stderr, never a
// hung run, and leaves no process behind.
func TestBadDriversAreClearCellErrors(t *testing.T) {
	hello := `printf '{"hello":"lockchaos-driver","version":1}\n'; `
	for _, c := range []struct {
		name, command, says string
	}{
		{"missing", "/nonexistent/driver-binary", "exited before its hello"},
		{"wrong-version", `printf '{"hello":"lockchaos-driver","version":9}\n'; sleep 5`, "speaks protocol version 9"},
		{"no-hello", `echo 'starting up'; sleep 5`, "first line is not a hello"},
		{"garbage", hello + `read line; echo 'this is not json'; sleep 5`, "not a protocol message"},
		{"hangs", hello + `echo 'stuck in a deadlock' >&2; sleep 30`, "did not answer request 1"},
		{"exits", hello + `read line; echo 'segfault (core dumped)' >&2; exit 139`, "segfault (core dumped)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			res := run(t, drivers.Driver{Name: "bad-" + c.name, Command: c.command}, "baseline", results.Safe)
			if res.Outcome != results.HarnessError || !strings.Contains(res.Error, "driver bad-"+c.name) || !strings.Contains(res.Error, c.says) {
				t.Fatalf("outcome %s, error %q; want a harness error naming the driver and saying %q", res.Outcome, res.Error, c.says)
			}
			if time.Since(start) > 20*time.Second {
				t.Fatalf("took %v", time.Since(start))
			}
		})
	}
}

func TestParse(t *testing.T) {
	d, err := drivers.Parse("pylock=python3 driver.py --fast")
	if err != nil || d.Name != "pylock" || d.Command != "python3 driver.py --fast" || d.Spec().Nodes != 1 {
		t.Fatalf("%+v %v", d, err)
	}
	for _, bad := range []string{"pylock", "=python3 x.py", "pylock=", "..=true", "../../x=true", "a b=true"} {
		if _, err := drivers.Parse(bad); err == nil || !strings.Contains(err.Error(), "--lock-driver") {
			t.Errorf("%q: %v, want an error naming the flag", bad, err)
		}
	}
}

// TestGoDriverOnPostgres: a driver declared on the postgres service gets
// the PostgreSQL servers' addresses (LOCKCHAOS_SERVICE, _ADDRS,
// _POSTGRES_URLS) and keeps mutual exclusion with a session advisory
// lock; a declaration on an unknown service, or with independent nodes on
// PostgreSQL, is refused with the valid names.
func TestGoDriverOnPostgres(t *testing.T) {
	if _, err := postgres.Find(); err != nil {
		t.Skip(err)
	}
	d := drivers.Driver{Name: "proc-pg", Command: goDriver + " --lock pg-advisory", Service: "postgres"}
	if res := run(t, d, "baseline", results.Safe); res.Outcome != results.Met {
		t.Fatalf("baseline on postgres: %s", res.Summary())
	}
	for decl, want := range map[drivers.Driver]string{
		{Name: "x", Command: "true", Service: "mysql"}:              `unknown lock service "mysql" (valid: redis, postgres, etcd)`,
		{Name: "x", Command: "true", Service: "postgres", Nodes: 3}: "independent nodes are Redis's",
	} {
		if err := decl.Validate(); err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, drivers.ErrInvalid) {
			t.Errorf("%+v: %v; want %q", decl, err, want)
		}
	}
}
