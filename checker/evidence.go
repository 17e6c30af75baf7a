package checker

import (
	"fmt"

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
	for _, e := range evs {
		switch e.Kind {
		case history.Fault:
			ev.Fired++
		case history.Exercised:
			ev.Judged++
			m := history.JudgmentOf(e)
			if m.Exercised {
				ev.Exercised++
			} else {
				lastMiss = e.Detail()
			}
			ev.Moments = append(ev.Moments, m)
		}
	}
	ev.lastMiss = lastMiss
	return ev.Hold(floor, len(h.Header.Faults) > 0 || ev.Fired > 0)
}

// Hold holds the counts to floor (nil: no floor, always enough) and says
// in words what falls short. faulty says the cell scheduled faults, so
// exercised moments are required.
func (ev Evidence) Hold(floor *history.Floor, faulty bool) Evidence {
	ev.Floor, ev.Short, ev.Enough = floor, nil, true
	if floor == nil {
		return ev
	}
	if faulty && ev.Exercised < floor.MinExercised {
		why := fmt.Sprintf("not exercised: %d of %d fault window(s) reached the dangerous moment; the floor is %d",
			ev.Exercised, ev.Fired, floor.MinExercised)
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
	for _, e := range evs {
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
