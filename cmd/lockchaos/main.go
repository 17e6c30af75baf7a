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
//	4  inconclusive: a checker ran out of budget, too little evidence, or
//	   (run) every cell was skipped; never reported as a pass
//	130, 143  interrupted by SIGINT, SIGTERM
//
// Commands and flags are spf13/cobra's (cli.go): flags anywhere among the
// arguments, completion scripts for bash, zsh, fish and PowerShell with
// values from the registries, and the command shape Go users know from
// kubectl, gh and docker.
package main

import (
	"embed"
	"fmt"
	"io"
	"os"

	"github.com/lockchaos/lockchaos/internal/cobrakit"
	"github.com/lockchaos/lockchaos/reports"
)

// Exit codes, documented above and in the README: reports'.
const (
	exitOK           = reports.ExitOK
	exitViolation    = reports.ExitViolation
	exitUsage        = reports.ExitUsage
	exitHarness      = reports.ExitHarness
	exitInconclusive = reports.ExitInconclusive
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run executes one command line and returns its exit code. Every call
// builds its own command tree, so the tests can run many command lines in
// one process without flag values leaking from one to the next.
func run(args []string, stdout, stderr io.Writer) int {
	cl := &cli{stdout: stdout, stderr: stderr}
	root := newRoot(cl)
	if len(args) == 0 {
		// Not asked for: the usage is the error.
		fmt.Fprint(stderr, cl.helpText(root))
		return exitUsage
	}
	cl.args = cobrakit.LongFlags(root, args)
	root.SetArgs(cl.args)
	cmd, err := root.ExecuteC()
	return cl.exitFor(root, cmd, err)
}

// The commands' help texts, one file each under usage/: the words a
// user reads, kept apart from the code that wires the flags.
//
//go:embed usage/*.txt
var usageFiles embed.FS

// usage is the help text of the command (or "root") name.
func usage(name string) string {
	b, err := usageFiles.ReadFile("usage/" + name + ".txt")
	if err != nil {
		panic(err) // a mistake in this package: every name has its file
	}
	return string(b)
}
