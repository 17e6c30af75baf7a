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
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
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
  lockchaos version                       the version of this build
  lockchaos help                          this text

Run "lockchaos COMMAND --help" for a command's flags and examples.

Exit codes: 0 pass, 1 violation, 2 usage or bad input, 3 harness could not run,
4 inconclusive (a checker ran out of budget), 130/143 interrupted.
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "run":
		return cmdRun(args[1:], stdout, stderr)
	case "list":
		return cmdList(args[1:], stdout, stderr)
	case "check":
		return cmdCheck(args[1:], stdout, stderr)
	case "report":
		return cmdReport(args[1:], stdout, stderr)
	case "compare":
		return cmdCompare(args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "lockchaos %s (%s)\n", version, runtime.Version())
		return exitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "lockchaos: unknown command %q (valid: run, list, check, report, compare, version, help)\n\n%s", args[0], usage)
	return exitUsage
}
