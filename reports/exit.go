package reports

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/results"
)

// The exit codes of a run, documented in the CLI's help and the README;
// every command of the CLI uses the same ones.
const (
	ExitOK           = 0
	ExitViolation    = 1 // a safe cell failed, or an unsafe one was missed
	ExitUsage        = 2
	ExitHarness      = 3 // the harness could not run
	ExitInconclusive = 4 // too little evidence, a budget ran out, or nothing ran
)

// ExitCode is the run's exit code by its outcomes, worst first. A run
// whose reports were not all written is a harness error unless a
// violation already fails it: a run whose reports are missing never exits
// 0. A run in which every cell was skipped tested nothing: a gate that
// ran nothing must not look green (NothingRan).
func (s *Summary) ExitCode(written bool) int {
	code := ExitOK
	switch {
	case s.Totals[string(results.Regression)]+s.Totals[string(results.Missed)] > 0:
		code = ExitViolation
	case s.Totals[string(results.HarnessError)] > 0:
		code = ExitHarness
	case s.Totals[string(results.Unknown)]+s.Totals[string(results.Inconclusive)] > 0:
		code = ExitInconclusive
	}
	switch {
	case !written && code != ExitViolation:
		return ExitHarness
	case code == ExitOK && s.NothingRan():
		return ExitInconclusive
	}
	return code
}

// CheckExitCode is the exit code of a re-check of one history: a pass
// below the evidence floor the history records is inconclusive, never a
// pass.
func CheckExitCode(rep *checker.Report) int {
	if rep.Verdict == checker.Pass && !rep.Evidence.Enough {
		return ExitInconclusive
	}
	return VerdictExitCode(rep.Verdict)
}

// VerdictExitCode is a verdict's exit code: pass 0, fail 1, else 4.
func VerdictExitCode(v checker.Status) int {
	switch v {
	case checker.Pass:
		return ExitOK
	case checker.Fail:
		return ExitViolation
	}
	return ExitInconclusive
}

// NothingRan says no cell of the run ran: each was skipped.
func (s *Summary) NothingRan() bool {
	return s.Totals[string(results.Skipped)] == len(s.Cells)
}

// DroppedHistories counts the met runs of a simulated sweep whose history
// files were deleted (scenarios.MatrixOptions.DropMetHistories).
func (s *Summary) DroppedHistories() int {
	n := 0
	for _, r := range s.Cells {
		if r.HistoryDropped {
			n++
		}
	}
	return n
}

// UseColour says whether w gets ANSI colours (WriteText's colour): a
// terminal, NO_COLOR unset (https://no-color.org), TERM not dumb.
func UseColour(w io.Writer) bool {
	f, ok := w.(*os.File)
	return colourFor(ok && isatty.IsTerminal(f.Fd()), os.Getenv)
}

// colourFor is UseColour's rule, given whether the output is a terminal.
func colourFor(terminal bool, getenv func(string) string) bool {
	return terminal && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}
