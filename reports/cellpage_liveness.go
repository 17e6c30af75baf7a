package reports

import (
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// The cell page's liveness section: what became of each key a stopped
// holder left, against the recovery bound, in the words an engineer paged
// for a job stuck behind a dead pod's lock would want: who stopped, how,
// what they held, how long the key stayed taken and who got it back, or
// that nobody ever did.

// livenessView is the section; nil when the report has nothing of
// liveness to say.
type livenessView struct {
	Rows     []recoveryRow
	Unjudged []string
	// Median and Max recovery, "" when no recovery was judged.
	Median, Max string
	// FreeWhileTrying is the node-down windows' share, "" when none.
	FreeWhileTrying string
	RecoverWithin   string
	AcquireWithin   string
}

// recoveryRow is one judged stopped holder. Stuck is the sentence that
// replaces the recovery columns when nobody got the key back.
type recoveryRow struct {
	Who, Cause, Key, At string
	After, Bound, By    string
	Stuck               string
	// Class is "ok", "late" (recovered past the bound) or "stuck".
	Class string
}

// resultRow is a property's result as the page shows it: Shown is its
// status in words (checker.Result.Shown: "not judged" for a liveness
// property that had no moment to judge, "n/a" where it does not apply).
type resultRow struct {
	checker.Result
	Shown    string
	Liveness bool
}

func resultRows(rs []checker.Result) []resultRow {
	out := make([]resultRow, len(rs))
	for i, r := range rs {
		out[i] = resultRow{Result: r, Shown: r.Shown(), Liveness: r.Property.Group() == checker.GroupLiveness}
	}
	return out
}

// hasLiveness says whether the report judged liveness or saw a holder
// stop: only then does the page get a liveness section.
func hasLiveness(rep *checker.Report) bool {
	l := rep.Liveness
	if len(l.Recoveries) > 0 || len(l.Stretches) > 0 {
		return true
	}
	for _, r := range rep.Results {
		if r.Property.Group() == checker.GroupLiveness && (r.Judged > 0 || r.Status != checker.Pass) {
			return true
		}
	}
	return false
}

// livenessSection builds the section from the report; ttl (0: unknown)
// turns durations into TTLs, hd supplies the bounds the report lacks.
func livenessSection(rep *checker.Report, hd history.Header, ttl time.Duration) *livenessView {
	if rep == nil || !hasLiveness(rep) {
		return nil
	}
	l := rep.Liveness
	v := &livenessView{}
	judged, recovered := false, false
	for _, rc := range l.Recoveries {
		if !rc.Judged {
			v.Unjudged = append(v.Unjudged, unjudgedText(rc))
			continue
		}
		judged = true
		recovered = recovered || rc.Recovered
		v.Rows = append(v.Rows, recoveryRowOf(rc, ttl))
	}
	if judged {
		// A median over no recovery is no figure: a stuck cell shows its max.
		v.Median, v.Max = "none recovered", inTTLs(l.MaxRecovery, ttl)
		if recovered {
			v.Median = inTTLs(l.MedianRecovery, ttl)
		}
	}
	if l.FreeWhileTrying >= 0 && (l.FreeWhileTrying > 0 || judgedAny(rep, checker.FaultTolerant)) {
		v.FreeWhileTrying = fmt.Sprintf("%.1f%%", 100*l.FreeWhileTrying)
	}
	if d := or(l.RecoverWithin, hd.RecoverWithin); d > 0 {
		v.RecoverWithin = inTTLs(d, ttl)
	}
	if d := or(l.AcquireWithin, hd.AcquireWithin); d > 0 {
		v.AcquireWithin = durText(d)
	}
	return v
}

func recoveryRowOf(rc checker.Recovery, ttl time.Duration) recoveryRow {
	row := recoveryRow{Who: clientWord(rc.Client), Cause: stopVerb(rc.Cause), Key: rc.Key, At: history.Seconds(rc.At),
		Bound: inTTLs(rc.Bound, ttl), Class: "ok"}
	switch {
	case !rc.Recovered:
		row.Class = "stuck"
		row.Stuck = fmt.Sprintf("nobody acquired %s for %s, to the end of the cell (bound %s)", rc.Key, inTTLs(rc.After, ttl),
			durText(rc.Bound))
		if rc.Stuck {
			row.Stuck = "stuck: " + row.Stuck
		}
	case rc.By == rc.Client:
		row.By = clientWord(rc.By) + " itself, restarted or healed"
	default:
		row.By = clientWord(rc.By)
	}
	if rc.Recovered {
		row.After = inTTLs(rc.After, ttl)
		if rc.Stuck {
			row.Class, row.After = "late", row.After+": past the bound"
		}
	}
	return row
}

// unjudgedText: "client 2 crashed at 0.900 s holding order:1: not judged:
// nobody else tried order:1 after client 2 stopped".
func unjudgedText(rc checker.Recovery) string {
	holding := ""
	if rc.Key != "" {
		holding = " holding " + rc.Key
	}
	why := rc.Why
	if why == "" {
		why = "the checker gave no reason"
	}
	return fmt.Sprintf("%s %s at %s%s: not judged: %s", clientWord(rc.Client), stopVerb(rc.Cause),
		history.Seconds(rc.At), holding, why)
}

// inTTLs: "310 ms (1.03 TTL)", or "310 ms" when the TTL is unknown.
func inTTLs(d, ttl time.Duration) string {
	if ttl <= 0 {
		return durText(d)
	}
	return fmt.Sprintf("%s (%.2f TTL)", durText(d), float64(d)/float64(ttl))
}

func judgedAny(rep *checker.Report, p checker.Property) bool {
	r := rep.Result(p)
	return r != nil && r.Judged > 0
}

func or(d, fallback time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return fallback
}
