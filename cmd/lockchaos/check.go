package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/workload/history"
)

const checkUsage = `Usage: lockchaos check [flags] HISTORY.jsonl

Re-checks a history recorded by lockchaos (a crashed run's history too: its
operations with no return count as indefinite) and prints the verdict and
every violation in plain words.

Examples:
  lockchaos check out/chaos/slow-holder/naive/history.jsonl
  lockchaos check --budget 2m --json history.jsonl > verdict.json

Exit codes: 0 pass, 1 violation, 2 bad input, 4 inconclusive.

Flags:
`

func cmdCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	budget := fs.Duration("budget", 30*time.Second, "porcupine search budget per property; running out gives inconclusive, never pass")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	maxV := fs.Int("max-violations", 20, "violations to print per property (all are counted)")
	fs.Usage = func() { fmt.Fprint(stderr, checkUsage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "lockchaos check: want exactly one history file")
		fs.Usage()
		return exitUsage
	}
	if *budget <= 0 || *maxV <= 0 {
		fmt.Fprintln(stderr, "lockchaos check: --budget and --max-violations must be positive")
		return exitUsage
	}
	h, err := history.LoadFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos check: %v\n", err)
		return exitUsage
	}
	rep := checker.Check(context.Background(), h, checker.Options{Budget: *budget, MaxViolations: *maxV})
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "lockchaos check: %v\n", err)
			return exitHarness
		}
	} else {
		printReport(stdout, fs.Arg(0), h, rep)
	}
	return verdictExit(rep.Verdict)
}

func verdictExit(v checker.Status) int {
	switch v {
	case checker.Pass:
		return exitOK
	case checker.Fail:
		return exitViolation
	}
	return exitInconclusive
}

func printReport(w io.Writer, name string, h *history.History, rep *checker.Report) {
	hd := h.Header
	fmt.Fprintf(w, "%s: scenario %s, lock %s, seed %d, %d events over %s\n",
		name, orDash(hd.Scenario), orDash(rep.Lock), hd.Seed, len(h.Events), history.Seconds(h.End))
	fmt.Fprintf(w, "verdict: %s\n", rep.Verdict)
	for _, r := range rep.Results {
		decisive := ""
		if !r.Decisive {
			decisive = " (not decisive)"
		}
		fmt.Fprintf(w, "  %-22s %-7s %d violation(s)%s\n", r.Property, r.Status, r.ViolationCount, decisive)
		if r.Note != "" {
			fmt.Fprintf(w, "      note: %s\n", r.Note)
		}
		for _, v := range r.Violations {
			fmt.Fprintf(w, "      - %s\n", v.Summary)
		}
		if r.ViolationCount > len(r.Violations) {
			fmt.Fprintf(w, "      ... and %d more\n", r.ViolationCount-len(r.Violations))
		}
	}
	s := rep.Stats
	fmt.Fprintf(w, "stats: %d acquired, %d refused, %d indefinite; %.0f cycles/s; acquire p50 %s p99 %s; longest free while trying %s",
		s.AcquireOK, s.AcquireRefused, s.AcquireIndefinite, s.CyclesPerSecond,
		ms(s.AcquireP50), ms(s.AcquireP99), ms(s.LongestFree))
	if s.FirstViolation >= 0 {
		fmt.Fprintf(w, "; first violation at %s", history.Seconds(s.FirstViolation))
	}
	fmt.Fprintln(w)
	for _, warn := range rep.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

func ms(ns int64) string { return fmt.Sprintf("%.2f ms", float64(ns)/1e6) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
