package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/reports"
)

const checkUsage = `Re-checks a history recorded by lockchaos (a crashed run's history too: its
operations with no return count as indefinite) and prints the verdict and
every violation in plain words.

Examples:
  lockchaos check out/chaos/slow-holder/naive/history.jsonl
  lockchaos check --budget 2m --json history.jsonl > verdict.json

Exit codes: 0 pass, 1 violation, 2 bad input (the file and line at fault:
the header must be the first line, no line may pass 1 MiB, a client must be
one of the header's), 4 inconclusive (a checker ran out of budget, a pass
below the evidence floor the history records, or a history with no events:
verdict unknown, nothing was checked).`

func newCheckCmd(cl *cli) *cobra.Command {
	var budget time.Duration
	var asJSON bool
	var maxV int
	c := &cobra.Command{
		Use: "check HISTORY.jsonl", Short: "re-check a recorded history", Long: checkUsage,
		Args: cobra.ArbitraryArgs, // check words its own "want exactly one history file"
		RunE: func(_ *cobra.Command, files []string) error {
			return done(cmdCheck(files, budget, asJSON, maxV, cl.stdout, cl.stderr))
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return []cobra.Completion{"jsonl"}, cobra.ShellCompDirectiveFilterFileExt
		},
	}
	fs := c.Flags()
	fs.DurationVar(&budget, "budget", 30*time.Second, "porcupine search budget per property; running out gives inconclusive, never pass")
	fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
	fs.IntVar(&maxV, "max-violations", 20, "violations to print per property (all are counted)")
	noCompletionForTheRest(c)
	return c
}

func cmdCheck(files []string, budget time.Duration, asJSON bool, maxV int, stdout, stderr io.Writer) int {
	if len(files) != 1 {
		fmt.Fprintf(stderr, "lockchaos check: want exactly one history file, got %d\n"+
			"Run 'lockchaos check --help' for its flags.\n", len(files))
		return exitUsage
	}
	if budget <= 0 || maxV <= 0 {
		fmt.Fprintln(stderr, "lockchaos check: --budget and --max-violations must be positive")
		return exitUsage
	}
	defer tuneCheckGC()()
	// The file is read once, as a stream (a FIFO works, /dev/zero fails
	// at its first MiB): the windows it leaves unjudged are judged as its
	// chunks go by.
	j := &judge{judged: map[int64]bool{}, pending: map[int64]history.Judgment{}}
	w := &witnesses{}
	opts := checker.FileOptions{Options: checker.Options{Budget: budget, MaxViolations: maxV},
		Prepare: func(h *history.History, last bool) { j.prepare(h, last); w.add(h) }}
	// Read and checked in chunks of a million events or more, cut where
	// each key is quiet: memory follows the chunk, not the file.
	// SIGINT or SIGTERM ends the check at once (a FIFO that never ends
	// blocks its read; a file of gigabytes takes a while): 130 or 143,
	// never a verdict on the part read. Asked for explicitly, so a check
	// started with SIGINT ignored (a script's background job) still hears
	// it. The check writes nothing, so nothing is left half done.
	ctx, stop, caught := signalContext()
	defer stop()
	type checked struct {
		rep *checker.Report
		sum checker.FileSummary
		err error
	}
	done := make(chan checked, 1)
	go func() {
		rep, sum, err := checker.CheckFile(ctx, files[0], opts)
		done <- checked{rep, sum, err}
	}()
	var res checked
	select {
	case res = <-done:
	case <-ctx.Done():
	}
	if code := interruptCode(caught()); code != 0 {
		fmt.Fprintf(stderr, "lockchaos check: interrupted (%s): no verdict\n", signalName(code))
		return code
	}
	rep, sum, err := res.rep, res.sum, res.err
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos check: %v\n", err)
		return exitUsage
	}
	if sum.Events == 0 {
		noEvents(rep)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "lockchaos check: %v\n", err)
			return exitHarness
		}
	} else {
		printReport(stdout, files[0], sum, rep, w)
	}
	if rep.Verdict == checker.Pass && !rep.Evidence.Enough {
		return exitInconclusive
	}
	return verdictExit(rep.Verdict)
}

// judge fills in the judgments a history lacks (a crashed run's last
// windows, or every window of a history from before judgments), without
// reading the file twice: each chunk's windows are judged on the chunk's
// own events, a judgment the file writes (perhaps chunks later) wins, and
// those still missing at the end are appended to the last chunk. (A window's
// effects past its chunk's cut are not seen, so a file of over a million
// events without judgments may count fewer windows exercised than a run did.)
type judge struct {
	judged  map[int64]bool             // windows the file judges
	pending map[int64]history.Judgment // judged here, not (yet) by the file
	next    int64                      // past every op id read
}

func (j *judge) prepare(h *history.History, last bool) {
	unjudged := false
	for _, e := range h.Events {
		j.next = max(j.next, e.ID+1)
		if e.Kind == history.Exercised {
			j.judged[e.Value] = true
			delete(j.pending, e.Value)
		}
	}
	for _, e := range h.Events {
		unjudged = unjudged || e.Kind == history.Fault && !j.judged[e.ID]
	}
	if unjudged {
		ttl := h.Header.TTL
		if ttl == 0 {
			ttl, _ = time.ParseDuration(h.Header.Extra["ttl"])
		}
		for _, jg := range faults.Judge(h, ttl) {
			if !j.judged[jg.Window] {
				j.pending[jg.Window] = jg
			}
		}
	}
	if !last || len(j.pending) == 0 {
		return
	}
	js := slices.SortedFunc(maps.Values(j.pending), func(a, b history.Judgment) int { return cmp.Compare(a.Window, b.Window) })
	n := len(h.Events)
	faults.Append(h, js)
	for i := n; i < len(h.Events); i++ { // past every id, which a chunk's length is not
		h.Events[i].ID = j.next + int64(i-n)
	}
}

// witnesses keeps a history's witness events as its chunks go by, for
// the server's one line: they are a share of the file (a few per cycle
// and node), and past maxWitnessEvents the line says it read the first
// ones only, rather than hold an unbounded file's worth.
type witnesses struct {
	events []history.Event
	more   int // past the cap
}

const maxWitnessEvents = 1 << 20

func (w *witnesses) add(h *history.History) {
	for _, e := range h.Events {
		if e.Kind != history.Witness {
			continue
		}
		if len(w.events) == maxWitnessEvents {
			w.more++
			continue
		}
		if e.Window != nil { // the chunk is the reader's: keep copies
			win := *e.Window
			win.Targets = slices.Clone(win.Targets)
			e.Window = &win
		}
		w.events = append(w.events, e)
	}
}

// line is the server's summary in one line.
func (w *witnesses) line(end int64) string {
	if w == nil {
		return ""
	}
	read := end
	if w.more > 0 {
		read = w.events[len(w.events)-1].Call
	}
	line := reports.SummarizeServer(w.events, read).Line(read)
	if w.more > 0 {
		line += fmt.Sprintf(" (of the first %d witness events, to %s; %d more not read)", len(w.events),
			history.Seconds(read), w.more)
	}
	return line
}

// noEvents marks the report on a history with no events (a header alone,
// as a run whose pods never started leaves): nothing was checked, so
// nothing passed. The verdict is unknown (exit 4), the evidence short.
func noEvents(rep *checker.Report) {
	for i := range rep.Results {
		if r := &rep.Results[i]; r.Status == checker.Pass {
			r.Status = checker.Unknown
			if r.Note == "" {
				r.Note = "not checked: no events"
			}
		}
	}
	rep.Verdict = checker.Unknown
	rep.Evidence.Enough = false
	rep.Evidence.Short = append(rep.Evidence.Short, "the history has no events: nothing was checked")
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

func printReport(w io.Writer, name string, sum checker.FileSummary, rep *checker.Report, ws *witnesses) {
	hd := sum.Header
	fmt.Fprintf(w, "%s: scenario %s, lock %s, seed %d, %d events over %s",
		name, orDash(hd.Scenario), orDash(rep.Lock), hd.Seed, sum.Events, history.Seconds(sum.End))
	if sum.Chunks > 1 {
		fmt.Fprintf(w, " (checked in %d chunks, the largest %d events)", sum.Chunks, sum.LargestChunk)
	}
	fmt.Fprintln(w)
	if rep.Simulated {
		fmt.Fprintf(w, "SIMULATED: recorded on backend %s (miniredis in virtual time), not on real Redis\n", orDash(rep.Backend))
	}
	fmt.Fprintf(w, "verdict: %s\n", rep.Verdict)
	ev := rep.Evidence
	fmt.Fprintf(w, "evidence: %s", ev.Summary())
	if ev.Floor == nil {
		fmt.Fprint(w, " (no floor recorded)")
	}
	fmt.Fprintln(w)
	if le := ev.LeaseEnds(); le != "" {
		fmt.Fprintf(w, "  %s\n", le)
	}
	// The floor is what a pass must show: a caught cell says it needs
	// none, and only a group that passed is held to its shortfalls.
	proof := ev.Against(rep.Results)
	if proof.Sentence != "" {
		fmt.Fprintf(w, "  %s\n", proof.Sentence)
	}
	for _, why := range proof.Short {
		fmt.Fprintf(w, "  inconclusive: %s\n", why)
	}
	for _, m := range ev.Moments {
		mark := "-"
		if m.Exercised {
			mark = "+"
		}
		lease := ""
		switch m.Lease {
		case history.LeaseObserved:
			lease = " [lease end observed]"
		case history.LeaseAssumed:
			lease = " [lease end assumed from the TTL]"
		}
		fmt.Fprintf(w, "  %s %s (op %d)%s: %s\n", mark, m.Fault, m.Window, lease, m.Detail)
	}
	if line := ws.line(sum.End); line != "" {
		fmt.Fprintln(w, line)
	}
	if len(rep.Incidents) > 0 {
		fmt.Fprintf(w, "incidents: %d\n", len(rep.Incidents))
		for i, in := range rep.Incidents {
			fmt.Fprintf(w, "  %d. %s to %s, %d violation(s) of %s: %s\n", i+1, history.Seconds(in.Start), history.Seconds(in.End),
				in.Violations, strings.Join(in.Properties, ", "), in.Cause)
		}
	}
	printResults(w, rep.Results)
	printLiveness(w, rep.Liveness, hd.TTL)
	s := rep.Stats
	fmt.Fprintf(w, "stats: %d acquired, %d refused, %d indefinite; %d cycles, %s; acquire p50 %s p99 %s; longest free while trying %s",
		s.AcquireOK, s.AcquireRefused, s.AcquireIndefinite, s.Cycles, reports.CycleRate(s.Cycles, s.Duration),
		ms(s.AcquireP50), ms(s.AcquireP99), ms(s.LongestFree))
	if s.Abandoned > 0 {
		fmt.Fprintf(w, "; %d lease(s) abandoned", s.Abandoned)
	}
	if s.FirstViolation >= 0 {
		fmt.Fprintf(w, "; first violation at %s", history.Seconds(s.FirstViolation))
	}
	fmt.Fprintln(w)
	for _, warn := range rep.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

// printResults shows each property's status and its violations.
func printResults(w io.Writer, results []checker.Result) {
	for _, r := range results {
		decisive := ""
		if !r.Decisive {
			decisive = " (not decisive)"
		}
		if r.Property.Group() == checker.GroupLiveness {
			decisive = fmt.Sprintf(", %d judged", r.Judged) + decisive
		}
		fmt.Fprintf(w, "  %-22s %-10s %d violation(s)%s\n", r.Property, r.Shown(), r.ViolationCount, decisive)
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
}

// shownRecoveries is how many stopped holders check lists one by one.
const shownRecoveries = 20

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func ms(ns int64) string { return fmt.Sprintf("%.2f ms", float64(ns)/1e6) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
