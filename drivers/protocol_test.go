package drivers_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/drivers"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// shellDriver is a driver written in sh alone, after drivers/c/answer-only.c:
// it grants every acquire with the given lease and answers every release ok
// if the release carries that lease; a release without it ends the driver
// with the line on stderr. Not a lock (two pods hold a key at once).
func shellDriver(lease string) string {
	return `printf '{"hello":"lockchaos-driver","version":1}\n'
while read -r line; do
  id=${line#*'"id":'}; id=${id%%,*}
  case $line in
  *'"op":"acquire"'*) printf '{"id":%s,"result":"ok","lease":` + lease + `}\n' "$id" ;;
  *'"lease":` + lease + `,'*|*'"lease":` + lease + `}'*) printf '{"id":%s,"result":"ok"}\n' "$id" ;;
  *) echo "release without lease ` + lease + `: $line" >&2; exit 3 ;;
  esac
done`
}

// TestLeaseZeroIsALease: 0 is a lease id like any other (a counter that
// starts at 0, an index): every release of it carries "lease":0.
func TestLeaseZeroIsALease(t *testing.T) {
	res := run(t, drivers.Driver{Name: "lease-zero", Command: shellDriver("0")}, "baseline", results.Either)
	if res.Outcome == results.HarnessError || res.Stats.Cycles < 20 {
		t.Fatalf("outcome %s (%d cycles), error %q; want every release of lease 0 to carry it", res.Outcome, res.Stats.Cycles, res.Error)
	}
}

// TestStartUpIsNotTheCellsTime: a driver that takes a second to say hello
// does not spend the cell's clock: the first acquire is recorded at the
// start of the history and the cell ran its planned time, not a second more.
func TestStartUpIsNotTheCellsTime(t *testing.T) {
	d := drivers.Driver{Name: "slow-start", Command: "sleep 1; exec " + goDriver + " --lock token"}
	res := run(t, d, "baseline", results.Safe)
	if res.Outcome != results.Met || res.Checked == nil {
		t.Fatalf("baseline: %s", res.Summary())
	}
	first := int64(-1)
	for _, e := range res.Checked.Events {
		if e.Kind == history.Acquire {
			first = e.Call
			break
		}
	}
	if first < 0 || first > int64(300*time.Millisecond) || res.Ran > res.Planned+900*time.Millisecond {
		t.Fatalf("first acquire at %s, ran %v for a planned %v: the driver's start-up second was counted",
			history.Seconds(first), res.Ran, res.Planned)
	}
}

// TestCommandWithLeadingAssignments: a command may start with VAR=value
// words, as any shell command line may ("so $VARS expand").
func TestCommandWithLeadingAssignments(t *testing.T) {
	d := drivers.Driver{Name: "assigns", Command: `LOCKCHAOS_TEST_A=1 LOCKCHAOS_TEST_B="two words" ` + goDriver + " --lock token"}
	if res := run(t, d, "baseline", results.Safe); res.Outcome != results.Met {
		t.Fatalf("baseline: %s", res.Summary())
	}
}

// TestDocNamesTheStderrFile: docs/driver-protocol.md's name for a driver's
// stderr file is the file a cell leaves.
func TestDocNamesTheStderrFile(t *testing.T) {
	doc, err := os.ReadFile("../docs/driver-protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	pattern := regexp.MustCompile("`(driver-[A-Za-z-]*podN\\.stderr)`").FindSubmatch(doc)
	if pattern == nil {
		t.Fatal("docs/driver-protocol.md names no driver-...podN.stderr file")
	}
	d := drivers.Driver{Name: "named", Command: goDriver + " --lock token"}
	want := strings.NewReplacer("NAME", d.Name, "podN", "pod0").Replace(string(pattern[1]))
	dir := t.TempDir()
	sc := short(t, "baseline", 300*time.Millisecond)
	sc.Clients = 1
	res := scenarios.Run(context.Background(), sc, d.Spec(), results.Safe,
		scenarios.Options{Backend: process.Backend{}, Seed: 3, OutDir: dir, TimeScale: 1, MaxDuration: 2 * time.Second})
	found, _ := filepath.Glob(filepath.Join(dir, "*", "*", want))
	deeper, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*", want))
	if len(found)+len(deeper) == 0 {
		var files []string
		_ = filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { files = append(files, p); return nil })
		t.Fatalf("the doc says %s (%s), the cell (%s) left %v", pattern[1], want, res.Outcome, files)
	}
}

// TestDriverMessagesSayWhatIsWrong: a bad line is described (what is wrong
// with it), an answer to no request or to one answered already fails the
// cell, the errors of a driver that seems mute point at buffering, and no
// error repeats a package's prefix.
func TestDriverMessagesSayWhatIsWrong(t *testing.T) {
	hello := `printf '{"hello":"lockchaos-driver","version":1}\n'; read line; `
	defer drivers.SetHelloTimeout(time.Second)()
	for _, c := range []struct {
		name, command, says string
	}{
		{"null-id", hello + `printf '{"id":null,"result":"ok","lease":1}\n'; sleep 5`, "its id is null"},
		{"no-id", hello + `printf '{"result":"ok","lease":1}\n'; sleep 5`, "it has no id"},
		{"string-id", hello + `printf '{"id":"1","result":"ok","lease":1}\n'; sleep 5`, `"id" is a JSON string, want an integer`},
		{"not-json", hello + `printf 'ok 1\n'; sleep 5`, "it is not JSON"},
		{"unknown-id", hello + `printf '{"id":99,"result":"refused"}\n'; sleep 5`, "answered request 99, which it was never sent"},
		{"answered-twice", hello + `printf '{"id":1,"result":"refused"}\n{"id":1,"result":"refused"}\n'; sleep 5`,
			"answered request 1 twice"},
		{"no-lease", hello + `printf '{"id":1,"result":"ok"}\n'; sleep 5`, "granted an acquire without a lease"},
		{"bad-result", hello + `printf '{"id":1,"result":"yes"}\n'; sleep 5`, `result "yes" (want ok, refused or error)`},
		{"exits-before-hello", `echo 'no such gem' >&2; exit 3`, `exited before its hello line (exit status 3); its stderr: "no such gem"`},
		{"buffered-hello", `sleep 5`, "sent no hello line within 1s; is its stdout buffered?"},
		{"buffered-answer", `printf '{"hello":"lockchaos-driver","version":1}\n'; sleep 30`, "is its stdout buffered?"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, drivers.Driver{Name: "bad-" + c.name, Command: c.command}, "baseline", results.Safe)
			for _, prefix := range []string{"lockimpl:", "drivers:", "lock broken"} {
				if strings.Count(res.Error, prefix) > 1 {
					t.Errorf("%q more than once in %q", prefix, res.Error)
				}
			}
			if res.Outcome != results.HarnessError || !strings.Contains(res.Error, "driver bad-"+c.name) || !strings.Contains(res.Error, c.says) {
				t.Fatalf("outcome %s, error %q; want a harness error naming the driver and saying %q", res.Outcome, res.Error, c.says)
			}
		})
	}
}

// TestSetsidDescendantsDie: processes a driver started in a session of
// their own (out of its process group), one still its child and one
// orphaned at once by a double fork, end with the cell.
func TestSetsidDescendantsDie(t *testing.T) {
	d := drivers.Driver{Name: "daemons", Command: "setsid sleep 77.71 & (setsid sleep 77.72 &); exec " + goDriver + " --lock token"}
	t.Cleanup(func() { killSleeps("77.71", "77.72") })
	start := time.Now()
	if res := run(t, d, "baseline", results.Safe); res.Outcome != results.Met {
		t.Fatalf("baseline: %s", res.Summary())
	}
	if left := sleeps("77.71", "77.72"); len(left) > 0 {
		t.Fatalf("processes left after the cell: %v", left)
	}
	if took := time.Since(start); took > 6*time.Second {
		t.Errorf("the cell took %v: its end waited on its drivers' daemons", took)
	}
}

// TestOrphansOfADeadHarnessAreSwept: a driver's process left by a harness
// that died (SIGKILL) is killed by the next harness that starts a driver;
// one of a harness still alive is left alone.
func TestOrphansOfADeadHarnessAreSwept(t *testing.T) {
	t.Cleanup(func() { killSleeps("77.73", "77.74") })
	gone := exec.Command("sleep", "0.05")
	if err := gone.Start(); err != nil {
		t.Fatal(err)
	}
	deadHarness := drivers.TagOf(gone.Process.Pid)
	_ = gone.Wait()
	dead, alive := startTagged(t, deadHarness+".1", "77.73"), startTagged(t, drivers.TagOf(1)+".1", "77.74")
	drivers.SweepOrphans()
	exited := make(chan error, 1)
	go func() { exited <- dead.Wait() }()
	select {
	case <-exited:
	case <-time.After(2 * time.Second):
		t.Errorf("the dead harness's orphan was not killed")
	}
	if left := sleeps("77.74"); len(left) != 1 {
		t.Errorf("the live harness's process was killed (%v)", left)
	}
	_ = alive.Process.Kill()
	_ = alive.Wait()
}

func startTagged(t *testing.T, tag, arg string) *exec.Cmd {
	t.Helper()
	c := exec.Command("sleep", arg)
	c.Env = append(os.Environ(), drivers.TagVar+"="+tag)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	return c
}

// sleeps lists the live `sleep ARG` processes for each arg.
func sleeps(args ...string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := strings.LastIndexByte(string(stat), ')'); i < 0 || strings.HasPrefix(string(stat[i+1:]), " Z") {
			continue
		}
		for _, a := range args {
			if string(cmdline) == "sleep\x00"+a+"\x00" {
				out = append(out, pid)
			}
		}
	}
	return out
}

func killSleeps(args ...string) {
	for _, pid := range sleeps(args...) {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	}
}
