package reports

import (
	"fmt"
	"io"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// shownRecoveries is how many stopped holders the check text lists one
// by one.
const shownRecoveries = 20

// writeLivenessText shows what the history says of the lock's liveness:
// each stopped holder and what became of its key, the recovery figures
// (in TTLs too when the history records its TTL) and, in node-down
// windows, how much of the time a key was free while a pod tried. Nothing
// is printed when nothing happened that liveness reads.
func writeLivenessText(w io.Writer, lv checker.Liveness, ttl time.Duration) {
	if len(lv.Recoveries) == 0 && lv.FreeWhileTrying < 0 {
		return
	}
	fmt.Fprintf(w, "liveness: recover within %s%s, acquire within %s\n", textDur(lv.RecoverWithin), textTTLs(lv.RecoverWithin, ttl),
		textDur(lv.AcquireWithin))
	judged := 0
	for i, r := range lv.Recoveries {
		if r.Judged {
			judged++
		}
		if i == shownRecoveries {
			fmt.Fprintf(w, "  ... and %d more stopped holder(s)\n", len(lv.Recoveries)-i)
			break
		}
		fmt.Fprintf(w, "  - %s\n", recoveryText(r, ttl))
	}
	if judged > 0 {
		fmt.Fprintf(w, "  recovery, %d judged: max %s%s", judged, textDur(lv.MaxRecovery), textTTLs(lv.MaxRecovery, ttl))
		if lv.MedianRecovery > 0 {
			fmt.Fprintf(w, ", median of those recovered %s%s", textDur(lv.MedianRecovery), textTTLs(lv.MedianRecovery, ttl))
		}
		fmt.Fprintln(w)
	}
	if lv.FreeWhileTrying >= 0 {
		stuck := 0
		for _, s := range lv.Stretches {
			if s.Stuck {
				stuck++
			}
		}
		fmt.Fprintf(w, "  node-down windows: a key was free while a pod tried %.1f%% of the time a majority of the lock's "+
			"nodes was up; %d stretch(es) past the bound\n", 100*lv.FreeWhileTrying, stuck)
	}
}

// recoveryText is one stopped holder in words.
func recoveryText(r checker.Recovery, ttl time.Duration) string {
	who := fmt.Sprintf("client %d %s at %s", r.Client, r.Cause, history.Seconds(r.At))
	if r.Key != "" {
		who += " holding " + r.Key
	}
	switch {
	case !r.Judged:
		return who + ": not judged: " + r.Why
	case r.Recovered && r.Stuck:
		return fmt.Sprintf("%s: client %d acquired it %s later%s, past the bound %s: slow", who, r.By, textDur(r.After),
			textTTLs(r.After, ttl), textDur(r.Bound))
	case r.Recovered:
		return fmt.Sprintf("%s: client %d acquired it %s later%s, within the bound %s", who, r.By, textDur(r.After),
			textTTLs(r.After, ttl), textDur(r.Bound))
	}
	return fmt.Sprintf("%s: stuck: nobody acquired it for %s%s, to the end (bound %s)", who, textDur(r.After),
		textTTLs(r.After, ttl), textDur(r.Bound))
}

// textDur shows a liveness duration: "660 ms", "1.590 s", or as Go
// writes it below a millisecond (a history built by hand may count
// nanoseconds).
func textDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%d ms", d.Round(time.Millisecond).Milliseconds())
	}
	return d.String()
}

// textTTLs is " (2.20 TTLs)", or nothing when the history records no
// TTL: a multiple of a lease nobody recorded would be made up.
func textTTLs(d, ttl time.Duration) string {
	if ttl <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%.2f TTLs)", float64(d)/float64(ttl))
}
