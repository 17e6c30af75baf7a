// Command lockchaos runs lock implementations under faults on real Redis
// and checks the recorded histories for mutual-exclusion violations and
// lost updates.
//
// Exit codes (every command):
//
//	0  pass: every check passed (run: every cell met its expectation)
//	1  a violation was found (run: a safe cell failed or an unsafe one was missed)
//	2  usage, configuration or input error (a malformed history, an unknown name)
//	3  the harness could not run (Redis would not start, ...)
//	4  inconclusive: a checker ran out of budget (never reported as a pass)
//	130, 143  interrupted by SIGINT, SIGTERM
//
// Commands and flags are spf13/cobra's (cli.go): flags anywhere among the
// arguments, completion scripts for bash, zsh, fish and PowerShell with
// values from the registries, and the command shape Go users know from
// kubectl, gh and docker.
package main

import (
	"fmt"
	"io"
	"os"
)

// Exit codes, documented above and in the README.
const (
	exitOK           = 0
	exitViolation    = 1
	exitUsage        = 2
	exitHarness      = 3
	exitInconclusive = 4
)

const usage = `lockchaos: a chaos and correctness harness for distributed locks on Redis

Usage:
  lockchaos run [flags]                   run the scenario matrix (the CI gate)
  lockchaos list                          scenarios, locks, expectations, fault kinds
  lockchaos check [flags] HISTORY.jsonl   re-check a recorded history
  lockchaos report [--out DIR] DIR...     rebuild the HTML reports (merging shards)
  lockchaos compare DIR_A DIR_B           two runs' outcomes side by side (sim vs process)
  lockchaos completion SHELL              shell completion (bash, zsh, fish, powershell)
  lockchaos version                       the version of this build
  lockchaos help                          this text

Run "lockchaos COMMAND --help" for a command's flags and examples.
Completion in bash: source <(lockchaos completion bash)

Exit codes: 0 pass, 1 violation, 2 usage or bad input, 3 harness could not run,
4 inconclusive (a checker ran out of budget), 130/143 interrupted.
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run executes one command line and returns its exit code. Every call
// builds its own command tree, so the tests can run many command lines in
// one process without flag values leaking from one to the next.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cl := &cli{stdout: stdout, stderr: stderr}
	root := newRoot(cl)
	cl.args = longFlags(root, args)
	root.SetArgs(cl.args)
	cmd, err := root.ExecuteC()
	return cl.exitFor(root, cmd, err)
}
