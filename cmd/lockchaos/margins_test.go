package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/margins"
)

// lockchaos margins from the built binary (the simulation needs the
// testing.T sim.Host makes): the table, the sentence per lock, a family
// that breaks below its boundary, both liveness margins, the files,
// margins.json against its schema, the replay file and the commands that
// replay it, exit 0 when every boundary agrees with the theory (fenced's
// under restarts included: its fence counter restarts empty with the
// node).
func TestMarginsFromTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a search")
	}
	bin := lockchaosBinary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "margins", "--lock", "token,redlock,fenced", "--family", "pause,restart-delay", "--seeds", "3",
		"--confirm-on", "none", "--recovery-ttl", "300ms", "--out", dir)
	cmd.Env = append(os.Environ(), "CI=true")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("margins: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"FAMILY", "pause          token", "never (up to 10x TTL)",
		"token, TTL 300 ms, breaks under pause of", "restart-delay of", "TTL) or less", "and more",
		"freed after a crash in", "While a minority of nodes is silently gone", "redlock, TTL 300 ms, node timeout 60 ms",
		"margins.json"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	doc, err := os.ReadFile(filepath.Join(dir, "margins.json"))
	if err != nil {
		t.Fatal(err)
	}
	validate(t, compileSchema(t, "margins.v1.json"), "margins.json", doc)
	replaysAgree(t, text, dir)
	for _, f := range []string{"margins.md", "margins.html", "pause.svg", "restart-delay.svg", "found.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

// replaysAgree: found.yaml says to replay each schedule "with the command
// margins printed": the output prints one for each of its scenarios (it
// printed none), naming that file.
func replaysAgree(t *testing.T, out, dir string) {
	t.Helper()
	found, err := os.ReadFile(filepath.Join(dir, "found.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(string(found), "\n") {
		if name, ok := strings.CutPrefix(line, "  - name: "); ok {
			names = append(names, name)
		}
	}
	if len(names) == 0 || !strings.Contains(string(found), "the command margins printed") {
		t.Fatalf("found.yaml holds no schedule, or no longer speaks of the printed command:\n%s", found)
	}
	if !strings.Contains(out, "Replay a boundary's smallest breaking schedule (found.yaml) on real Redis:") {
		t.Errorf("no replay commands printed:\n%s", out)
	}
	for _, name := range names {
		want := "lockchaos run --scenarios-file " + filepath.Join(dir, "found.yaml") + " --scenario " + name + " "
		if !strings.Contains(out, want) {
			t.Errorf("found.yaml's %s has no printed replay %q:\n%s", name, want, out)
		}
	}
}

func TestMarginsUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"margins", "--family", "pasue", "--confirm-on", "none"}, "did you mean pause"},
		{[]string{"margins", "--lock", "mutex", "--confirm-on", "none"}, "keeps no shared state"},
		{[]string{"margins", "--lock", "nosuch", "--confirm-on", "none"}, "nosuch"},
		{[]string{"margins", "--backend", "moon", "--confirm-on", "none"}, "want sim, process or docker"},
		{[]string{"margins", "--lock-driver", "mine=./no-such-driver", "--lock", "mine", "--confirm-on", "none"}, "needs real Redis"},
		{[]string{"margins", "--scenarios-file", "no-such-file.yaml", "--confirm-on", "none"}, "no-such-file.yaml"},
	} {
		code, _, errOut := runCLI(c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want %d with %q", c.args, code, errOut, exitUsage, c.want)
		}
	}
}

// The replay command runs as pasted: quoted (an --out with a space split
// it), with the driver locks margins was given, on the Redis it confirmed
// on; a boundary without a schedule keeps none.
func TestReplayCommandsRunAsPasted(t *testing.T) {
	found := []margins.Margin{
		{Lock: "mine", Family: "pause", Shrunk: &margins.Shrunk{Seed: 7, Scenario: "margin-pause-mine", Replay: "lockchaos run ..."}},
		{Lock: "token", Family: "pause"},
	}
	replayCommands(found, marginsConfig{out: "my out", files: []string{"locks.yaml"}, lockDrivers: []string{"mine=./drv --fast"},
		backend: "sim", confirmOn: "docker"})
	want := "lockchaos run --scenarios-file locks.yaml --scenarios-file 'my out/found.yaml' --scenario margin-pause-mine " +
		"--lock mine --lock-driver 'mine=./drv --fast' --seed 7 --backend docker"
	if got := found[0].Shrunk.Replay; got != want {
		t.Errorf("replay:\n got %s\nwant %s", got, want)
	}
	if found[1].Shrunk != nil {
		t.Errorf("a boundary without a schedule got one: %+v", found[1].Shrunk)
	}
}
