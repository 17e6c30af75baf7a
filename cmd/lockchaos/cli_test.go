package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/lockchaos/lockchaos/internal/cobrakit"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

// Command lines written for the flag package (-json, -seed=5) still work:
// a single-dash long flag is the long flag, its value is left alone, and
// an unknown one gets the suggestion as with two dashes.
func TestSingleDashLongFlagsStillWork(t *testing.T) {
	code, stdout, stderr := runCLI("check", "-json", "-max-violations=3", testdata("lost-update.jsonl"))
	if code != exitViolation || !strings.HasPrefix(stdout, "{") {
		t.Fatalf("check -json -max-violations=3: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI("check", "-budget", "-1s", "x.jsonl"); code != exitUsage || !strings.Contains(stderr, "--budget and --max-violations must be positive") {
		t.Fatalf("check -budget -1s: the value was taken for a flag: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI("run", "-shard=3"); code != exitUsage || !strings.Contains(stderr, "want i/n") {
		t.Fatalf("run -shard=3: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI("list", "-jsn"); code != exitUsage || !strings.Contains(stderr, "did you mean --json?") {
		t.Fatalf("list -jsn: exit %d, %s", code, stderr)
	}
	if code, stdout, _ := runCLI("-version"); code != exitOK || !strings.HasPrefix(stdout, "lockchaos ") {
		t.Fatalf("-version: exit %d, %q", code, stdout)
	}
	root := newRoot(&cli{stdout: &strings.Builder{}, stderr: &strings.Builder{}})
	got := cobrakit.LongFlags(root, []string{"run", "-json", "-lock", "-x", "-h", "--seed", "5", "--", "-scenario"})
	want := []string{"run", "--json", "--lock", "-x", "-h", "--seed", "5", "--", "-scenario"}
	if !slices.Equal(got, want) {
		t.Fatalf("longFlags: %q, want %q", got, want)
	}
}

// Every command's --help documents each of its flags; help and
// "help COMMAND" work.
func TestHelpDocumentsEveryFlag(t *testing.T) {
	root := newRoot(&cli{stdout: &strings.Builder{}, stderr: &strings.Builder{}})
	for _, name := range []string{"run", "list", "check", "margins", "report", "compare", "completion", "version"} {
		code, stdout, _ := runCLI(name, "--help")
		if code != exitOK || !strings.HasPrefix(stdout, "Usage: lockchaos "+name) {
			t.Errorf("%s --help: exit %d\n%s", name, code, stdout)
			continue
		}
		cmd, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if !strings.Contains(stdout, "--"+f.Name+" ") && !strings.Contains(stdout, "--"+f.Name+"[") {
				t.Errorf("%s --help does not document --%s:\n%s", name, f.Name, stdout)
			}
		})
	}
	if code, stdout, _ := runCLI("help", "run"); code != exitOK || !strings.Contains(stdout, "--scenarios-file file") {
		t.Errorf("help run: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := runCLI("lsit"); code != exitUsage || !strings.Contains(stderr, "did you mean list?") || strings.Count(stderr, "\n") != 2 {
		t.Errorf("lsit: exit %d, want one line naming list and a pointer to help:\n%s", code, stderr)
	}
}

// helpLines are every help a user can ask for: the root's and each
// command's, by --help and by "help COMMAND".
func helpLines(t *testing.T) [][]string {
	t.Helper()
	root := newRoot(&cli{stdout: &strings.Builder{}, stderr: &strings.Builder{}})
	lines := [][]string{{"--help"}, {"-h"}, {"help"}}
	for _, c := range root.Commands() {
		lines = append(lines, []string{c.Name(), "--help"}, []string{"help", c.Name()})
	}
	if len(lines) < 3+2*9 {
		t.Fatalf("%d command lines: a command is missing from the tree", len(lines))
	}
	return lines
}

// Help that was asked for is the output (stdout, exit 0: "L run --help |
// less" shows it), in one shape for every command: a usage line, a
// Flags: header, and each flag's default said once (pflag's "(default
// 2)" after a usage that already says "default: one per core" was said
// twice). The root's lists every command.
func TestEveryHelpOnStdoutWithFlagsAndEachDefaultOnce(t *testing.T) {
	for _, args := range helpLines(t) {
		code, stdout, stderr := runCLI(args...)
		if code != exitOK || stderr != "" || !strings.Contains(stdout, "Usage:") {
			t.Errorf("%q: exit %d, stdout %d bytes, stderr %q", args, code, len(stdout), stderr)
			continue
		}
		_, flags, ok := strings.Cut(stdout, "\nFlags:\n")
		if !ok || !strings.Contains(flags, "--help") {
			t.Errorf("%q: no Flags: header before the flags:\n%s", args, stdout)
		}
		for _, l := range strings.Split(flags, "\n") {
			if strings.Count(l, "(default") > 1 || strings.Contains(l, "(default [])") {
				t.Errorf("%q says a default twice (or an empty one): %s", args, l)
			}
		}
	}
	_, stdout, _ := runCLI("--help")
	root := newRoot(&cli{stdout: &strings.Builder{}, stderr: &strings.Builder{}})
	for _, c := range root.Commands() {
		if !strings.Contains(stdout, "\n  lockchaos "+c.Name()+" ") {
			t.Errorf("lockchaos --help does not list %s:\n%s", c.Name(), stdout)
		}
	}
	// Not asked for, the usage is a usage error.
	if code, stdout, stderr := runCLI(); code != exitUsage || stdout != "" || !strings.Contains(stderr, "lockchaos margins") {
		t.Errorf("no arguments: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}

// "help nosuchcmd" is a usage error naming the valid commands, not the
// root's usage with exit 0.
func TestHelpOnAnUnknownCommandIsAUsageError(t *testing.T) {
	for _, topic := range [][]string{{"nosuchcmd"}, {"rn"}, {"run", "extra"}} {
		code, stdout, stderr := runCLI(append([]string{"help"}, topic...)...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, "unknown command") ||
			!strings.Contains(stderr, "valid: run, choose, list, check, margins, report, compare, completion, version, help") {
			t.Errorf("help %q: exit %d, stdout %q, stderr %q", topic, code, stdout, stderr)
		}
	}
	if _, _, stderr := runCLI("help", "rn"); !strings.Contains(stderr, "did you mean run?") {
		t.Errorf("help rn: no suggestion: %s", stderr)
	}
}

// complete asks the binary for completions as the shell scripts do and
// returns the values (without their descriptions) and the directive.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	code, stdout, stderr := runCLI(append([]string{"__complete"}, args...)...)
	if code != exitOK {
		t.Fatalf("__complete %q: exit %d\n%s", args, code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var values []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		values = append(values, name)
	}
	return values, lines[len(lines)-1]
}

// Flag values complete from the registries, with what the command line
// already names (a scenarios file, a driver lock) added in.
func TestCompletionOffersTheRegisteredValues(t *testing.T) {
	const noFiles, fileExt, dirs = ":4", ":8", ":16"
	locks, directive := complete(t, "run", "--lock", "")
	if !slices.Equal(locks, lockimpl.Names()) || directive != noFiles {
		t.Errorf("--lock: %q %s, want %q", locks, directive, lockimpl.Names())
	}
	var catalog []string
	for _, s := range scenarios.Catalog() {
		catalog = append(catalog, s.Name)
	}
	if got, _ := complete(t, "run", "--scenario", ""); !slices.Equal(got, catalog) {
		t.Errorf("--scenario: %q, want %q", got, catalog)
	}
	for _, c := range []struct {
		args []string
		want []string
		dir  string
	}{
		{[]string{"run", "--scenario", "baseline,gc"}, []string{"baseline,gc-pause"}, noFiles},
		{[]string{"run", "--scenarios-file", "../../scenarios/critiques.yaml", "--scenario", "clock-"}, []string{"clock-jump"}, noFiles},
		{[]string{"run", "--scenarios-file", "../../drivers/libs.yaml", "--lock-driver", "py=python3 d.py", "--lock", "token,r"},
			[]string{"token,redlock", "token,redis-py", "token,rueidislock"}, noFiles},
		{[]string{"run", "--lock-driver", "py=python3 d.py", "--lock", "py"}, []string{"py"}, noFiles},
		{[]string{"run", "--backend", ""}, []string{"auto", "process", "docker", "external", "sim"}, noFiles},
		{[]string{"run", "--expect", "safe,"}, []string{"safe,unsafe", "safe,either", "safe,n/a", "safe,live", "safe,stuck"}, noFiles},
		{[]string{"run", "--seed", ""}, nil, noFiles},
		{[]string{"run", "--scenarios-file", ""}, []string{"yaml", "yml"}, fileExt},
		{[]string{"list", "--scenarios-file", ""}, []string{"yaml", "yml"}, fileExt},
		{[]string{"run", "--out", ""}, nil, dirs},
		{[]string{"check", ""}, []string{"jsonl"}, fileExt},
		{[]string{"check", "h.jsonl", ""}, nil, noFiles},
		{[]string{"report", ""}, nil, dirs},
		{[]string{"report", "--markdown", ""}, []string{"md"}, fileExt},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish", "powershell"}, noFiles},
		{[]string{"li"}, []string{"list"}, noFiles},
	} {
		got, directive := complete(t, c.args...)
		if !slices.Equal(got, c.want) || directive != c.dir {
			t.Errorf("%q: %q %s, want %q %s", c.args, got, directive, c.want, c.dir)
		}
	}
}

func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, stdout, stderr := runCLI("completion", shell)
		if code != exitOK || !strings.Contains(stdout, "lockchaos") || !strings.Contains(stdout, "__complete") {
			t.Errorf("completion %s: exit %d, %d bytes\n%s", shell, code, len(stdout), stderr)
		}
	}
	if code, _, stderr := runCLI("completion", "tcsh"); code != exitUsage || !strings.Contains(stderr, "valid: bash, zsh, fish, powershell") {
		t.Errorf("completion tcsh: exit %d, %s", code, stderr)
	}
	if code, _, _ := runCLI("completion"); code != exitUsage {
		t.Errorf("completion without a shell: exit %d", code)
	}
}

// The bash script loads in a real bash and, driven as bash drives it on
// TAB, asks the built binary for the locks. It uses the bash-completion
// package when installed (as the README says to); without it, a stand-in
// for its one function the script calls. compopt only works inside a
// completion bash itself started, so it is a no-op here.
func TestBashLoadsTheCompletionScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := filepath.Dir(lockchaosBinary(t)) // PATH holds the package's one build
	script := `set -e
if [ -f /usr/share/bash-completion/bash_completion ]; then
  source /usr/share/bash-completion/bash_completion
else
  _get_comp_words_by_ref() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
fi
source <(lockchaos completion bash)
complete -p lockchaos
compopt() { :; }
COMP_WORDS=(lockchaos run --lock "")
COMP_CWORD=3
COMP_LINE="lockchaos run --lock "
COMP_POINT=${#COMP_LINE}
__start_lockchaos
printf '%s\n' "${COMPREPLY[@]}"
`
	cmd := exec.Command(bash, "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) == 0 || !strings.Contains(lines[0], "__start_lockchaos lockchaos") || !slices.Equal(lines[1:], lockimpl.Names()) {
		t.Fatalf("bash: %v\n%s", err, out)
	}
}
