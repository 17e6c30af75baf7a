package checker

import (
	"fmt"
	"strings"

	"github.com/lockchaos/lockchaos/history"
)

// Evidence is what the history shows of the danger a verdict rests on: how
// many fault windows fired, how many reached their kind's dangerous moment
// (the judgments the run wrote into the history), how much work the pods
// got done, and whether that clears the floor the history records. A pass
// below the floor is no verdict: the lock was never put to the test.
type Evidence struct {
	Fired      int            `json:"fired"`
	Judged     int            `json:"judged"`
	Exercised  int            `json:"exercised"`
	Cycles     int            `json:"cycles"`
	Acquires   int            `json:"acquires"`
	Indefinite int            `json:"indefinite"`
	Floor      *history.Floor `json:"floor,omitempty"`
	// Enough is true when the floor is met (or there is none).
	Enough bool `json:"enough"`
	// Short says, in words, what the evidence lacks.
	Short []string `json:"short,omitempty"`
	// Moments are the judged windows, exercised or not, with their sentences.
	Moments []history.Judgment `json:"moments,omitempty"`
	// Observed and Assumed count the judged windows (exercised or not)
	// whose judgment rested on a lease's end: Observed where a witness saw
	// the server drop or replace the key, Assumed where none could and the
	// end was taken from the TTL. A window whose danger depends on no
	// lease's end counts in neither (Judged - Observed - Assumed of them).
	Observed int `json:"observed"`
	Assumed  int `json:"assumed"`

	lastMiss string // the last window that missed its moment, in words
}

// Moment is one fault window judged against its dangerous moment.
//
// Deprecated: use history.Judgment, the one type for a judged window.
type Moment = history.Judgment

// Summary is one line: "4/5 exercised, 120 cycles, 2% indefinite".
func (e Evidence) Summary() string {
	s := fmt.Sprintf("%d cycles", e.Cycles)
	if e.Fired > 0 || (e.Floor != nil && e.Floor.MinExercised > 0 && e.Judged > 0) {
		s = fmt.Sprintf("%d/%d exercised, ", e.Exercised, e.Fired) + s
	}
	if e.Acquires > 0 && e.Indefinite > 0 {
		s += fmt.Sprintf(", %d%% indefinite", 100*e.Indefinite/e.Acquires)
	}
	return s
}

// LeaseEnds says what the judged windows' lease ends rested on: "lease
// ends: 3 observed on the server, 1 assumed from the TTL (of 5 judged
// windows; 1 depends on no lease's end)"; "" when nothing was judged.
func (e Evidence) LeaseEnds() string {
	if e.Judged == 0 {
		return ""
	}
	if e.Observed+e.Assumed == 0 {
		return fmt.Sprintf("lease ends: none of the %d judged window(s) depended on a lease's end", e.Judged)
	}
	rest := ""
	if n := e.Judged - e.Observed - e.Assumed; n > 0 {
		rest = fmt.Sprintf("; %d depend(s) on no lease's end", n)
	}
	return fmt.Sprintf("lease ends: %d observed on the server, %d assumed from the TTL (of %d judged window(s)%s)",
		e.Observed, e.Assumed, e.Judged, rest)
}

// Proof is how the evidence reads beside the verdict it is shown with.
// The floor is what a pass must show: a decisive violation is proof on
// its own, so a group whose decisive property failed needs none, and the
// floor's shortfalls (Short, which still decide whether a pass counts)
// are not held against it.
type Proof struct {
	// Failed are the decisive properties that failed.
	Failed []Property
	// Sentence says that no floor is needed, when one fell short and a
	// decisive property failed ("" otherwise).
	Sentence string
	// Short are the shortfalls that still count: every one when no
	// decisive property failed; when one did, those of a group that
	// passed, each saying so ("liveness passed below the floor: ...");
	// none when no group passed.
	Short []string
}

// Against reads the evidence beside rs, the results it is shown with
// (the cell page's evidence section, lockchaos check): a cell caught by a
// decisive violation must not read "not exercised ... the floor is 3" as
// though its verdict wanted more.
func (e Evidence) Against(rs []Result) Proof {
	var p Proof
	for _, r := range rs {
		if r.Decisive && r.Status == Fail {
			p.Failed = append(p.Failed, r.Property)
		}
	}
	if len(p.Failed) == 0 {
		p.Short = e.Short
		return p
	}
	if len(e.Short) == 0 {
		return p
	}
	names := make([]string, len(p.Failed))
	for i, f := range p.Failed {
		names[i] = string(f)
	}
	what := "a decisive violation of " + names[0] + " is proof on its own"
	if len(names) > 1 {
		what = "decisive violations of " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] +
			" are proof on their own"
	}
	p.Sentence = "no floor needed: " + what + " (the floor is what a pass must show)"
	for _, g := range []Group{GroupSafety, GroupLiveness} {
		if GroupVerdict(rs, g) != Pass {
			continue
		}
		for _, why := range e.Short {
			p.Short = append(p.Short, fmt.Sprintf("%s passed below the floor: %s", g, why))
		}
	}
	return p
}

// evidenceOf counts the evidence in a history and holds it to floor (the
// header's unless the options give one; none at all: no floor).
func evidenceOf(h *history.History, evs []history.Event, stats Stats, floor *history.Floor, c *carry) Evidence {
	ev := Evidence{Cycles: stats.Cycles, Floor: floor, Enough: true}
	var earlier []history.Event
	if c != nil {
		earlier = c.windows
	}
	ev.Acquires, ev.Indefinite = acquiresOutsideFaults(evs, earlier)
	lastMiss := ""
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case history.Fault:
			ev.Fired++
		case history.Exercised:
			ev.Judged++
			m := history.JudgmentOf(*e)
			if m.Exercised {
				ev.Exercised++
			} else {
				lastMiss = e.Detail()
			}
			switch m.Lease {
			case history.LeaseObserved:
				ev.Observed++
			case history.LeaseAssumed:
				ev.Assumed++
			}
			ev.Moments = append(ev.Moments, m)
		}
	}
	ev.lastMiss = lastMiss
	return ev.Hold(floor, len(h.Header.Faults) > 0 || ev.Fired > 0)
}

// Hold holds the counts to floor (nil: no floor, always enough) and says
// in words what falls short. faulty says the cell scheduled faults, so
// exercised moments are required. The floor is what a pass must show: its
// shortfalls are held whatever the verdict (a group that passed beside one
// that failed still needs them), and Against reads them beside the
// results, so a cell caught by a decisive violation says it needs none.
func (ev Evidence) Hold(floor *history.Floor, faulty bool) Evidence {
	ev.Floor, ev.Short, ev.Enough = floor, nil, true
	if floor == nil {
		return ev
	}
	if faulty && ev.Exercised < floor.MinExercised {
		why := fmt.Sprintf("not exercised: %d of %d fault window(s) reached the dangerous moment; the floor is %d",
			ev.Exercised, ev.Fired, floor.MinExercised)
		if ev.Fired > 0 && ev.Exercised == ev.Fired {
			// Every window reached it: too few fired (the cell ended
			// early), which "not exercised: 2 of 2" would contradict.
			why = fmt.Sprintf("too few fault windows: %d fired, each reached the dangerous moment; the floor is %d",
				ev.Fired, floor.MinExercised)
		}
		if ev.lastMiss != "" {
			why += " (last miss: " + ev.lastMiss + ")"
		}
		ev.Short = append(ev.Short, why)
	}
	if ev.Cycles < floor.MinCycles {
		ev.Short = append(ev.Short, fmt.Sprintf("too few cycles: %d completed, the floor is %d", ev.Cycles, floor.MinCycles))
	}
	if ev.Acquires > 0 && float64(ev.Indefinite) > floor.MaxIndefinite*float64(ev.Acquires) {
		ev.Short = append(ev.Short, fmt.Sprintf("starved: %d of %d acquires outside fault windows timed out "+
			"(%.0f%%, over %.0f%%): the machine is overloaded or the call timeout is too tight",
			ev.Indefinite, ev.Acquires, 100*float64(ev.Indefinite)/float64(ev.Acquires), 100*floor.MaxIndefinite))
	}
	ev.Enough = len(ev.Short) == 0
	return ev
}

// Add sums two parts' evidence (a long cell checks its parts one by one);
// the floor is held again by the caller.
func (ev Evidence) Add(o Evidence) Evidence {
	ev.Fired += o.Fired
	ev.Judged += o.Judged
	ev.Exercised += o.Exercised
	ev.Cycles += o.Cycles
	ev.Acquires += o.Acquires
	ev.Indefinite += o.Indefinite
	ev.Observed += o.Observed
	ev.Assumed += o.Assumed
	if o.lastMiss != "" {
		ev.lastMiss = o.lastMiss
	}
	if len(ev.Moments) < 200 {
		ev.Moments = append(ev.Moments, o.Moments...)
	}
	if ev.Floor == nil {
		ev.Floor, ev.Short, ev.Enough = o.Floor, o.Short, o.Enough
	}
	return ev
}

// acquiresOutsideFaults counts the acquire attempts whose call lies in no
// fault window, and how many of them ended indefinite. evs are by call.
func acquiresOutsideFaults(evs, earlier []history.Event) (all, indefinite int) {
	var windows [][2]int64
	for _, e := range chain(earlier, evs) {
		if e.Kind == history.Fault {
			windows = append(windows, [2]int64{e.Call, e.Return})
		}
	}
	w := 0
	for i := range evs {
		e := &evs[i]
		if e.Kind != history.Acquire {
			continue
		}
		for w < len(windows) && windows[w][1] < e.Call {
			w++
		}
		inside := false
		for i := w; i < len(windows) && windows[i][0] <= e.Call; i++ {
			if e.Call <= windows[i][1] {
				inside = true
				break
			}
		}
		if inside {
			continue
		}
		all++
		if e.Outcome == history.Indefinite {
			indefinite++
		}
	}
	return all, indefinite
}
