package main

import (
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/internal/shellword"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

// TestRerunLinesAreShellSafe: a rerun line pasted into a shell gives back
// exactly the words the run meant, whatever a scenario's name, a driver's
// command or a file's name holds, and runs nothing (the scenario
// named `x;touch${IFS}PWNED;#` made a pasted line create PWNED). Plain
// words stay unquoted.
func TestRerunLinesAreShellSafe(t *testing.T) {
	token, _ := lockimpl.Lookup("token")
	hostile := []string{"x;touch${IFS}PWNED;#", "$(touch PWNED)", "`touch PWNED`", "a'b", "it's \"quoted\"", "x|touch PWNED",
		"x&&touch PWNED", "x>PWNED", "~root", "*", "?", "[a]", "{a,b}", "a\nb", "a\\b", "!!", "", " lead", "tab\there", "#c", "x#y", "=v"}
	for _, name := range hostile {
		c := resolved(t, "--seed", "5", "--lock-driver", "token=ruby -e 'puts 1' "+name, "--scenarios-file", name+".yaml")
		rerun := c.cellOptions(target{Timing: scenarios.Timing{Scale: 1}}, nil).Rerun
		sc := scenarios.Scenario{Name: name}
		line := rerun(&scenarios.Plan{Scenario: sc, Lock: token, RunSeed: 5})
		want := []string{"lockchaos", "run", "--scenario", name, "--lock", "token", "--seed", "5",
			"--lock-driver", "token=ruby -e 'puts 1' " + name}
		for _, f := range c.files { // a list flag: split at commas, trimmed
			want = append(want, "--scenarios-file", f)
		}
		want = append(want, "--time-scale", "1.00")
		if got := shellWords(t, line); !reflect.DeepEqual(got, want) {
			t.Errorf("name %q: line %s\n gives %q\n want %q", name, line, got, want)
		}
		// scenarios' own default line (no Rerun) quotes its names too.
		plan := scenarios.NewPlan(scenarios.Cell{Scenario: scenarios.Scenario{Name: name, Duration: time.Second}, Lock: token},
			scenarios.Options{Seed: 5})
		if got, want := shellWords(t, plan.Rerun), []string{"lockchaos", "run", "--scenario", name, "--lock", "token", "--seed", "5"}; !reflect.DeepEqual(got, want) {
			t.Errorf("scenarios' line for %q: %s\n gives %q\n want %q", name, plan.Rerun, got, want)
		}
	}
	if got := shellword.Join([]string{"lockchaos", "run", "--scenario", "baseline", "--lock", "token,naive", "--redis-addr", "[::1]:6379",
		"--lock-driver", "rb=./rb", "--budget", "1m0s", "--max-indefinite", "0.25", "--scenarios-file", "../a/b_c-d.yaml", "--x=@%+"}); got !=
		"lockchaos run --scenario baseline --lock token,naive --redis-addr '[::1]:6379' --lock-driver rb=./rb --budget 1m0s "+
			"--max-indefinite 0.25 --scenarios-file ../a/b_c-d.yaml --x=@%+" {
		t.Errorf("plain words quoted: %s", got)
	}
}

// shellWords is what a POSIX shell (sh, and bash when installed) makes of
// line pasted after `set --`: its words, one per argument. It fails the
// test if the line made the shell create any file.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	for i, sh := range []string{"sh", "bash"} {
		if _, err := exec.LookPath(sh); err != nil && i > 0 {
			continue
		}
		dir := t.TempDir()
		cmd := exec.Command(sh, "-c", "set -- "+line+"\nprintf '%s\\0' \"$@\"")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v: %s", sh, err, line)
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Fatalf("%s: pasting %s created %v", sh, line, left)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if i > 0 && !reflect.DeepEqual(got, words) {
			t.Fatalf("sh and %s disagree on %s: %q, %q", sh, line, words, got)
		}
		words = got
	}
	return words
}
