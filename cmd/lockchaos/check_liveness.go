package main

import (
	"fmt"
	"io"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// printLiveness shows what the history says of the lock's liveness: each
// stopped holder and what became of its key, the recovery figures (in
// TTLs too when the history records its TTL) and, in node-down windows,
// how much of the time a key was free while a pod tried. Nothing is
// printed when nothing happened that liveness reads.
func printLiveness(w io.Writer, lv checker.Liveness, ttl time.Duration) {
	if len(lv.Recoveries) == 0 && lv.FreeWhileTrying < 0 {
		return
	}
	fmt.Fprintf(w, "liveness: recover within %s%s, acquire within %s\n", dur(lv.RecoverWithin), inTTLs(lv.RecoverWithin, ttl),
		dur(lv.AcquireWithin))
	judged := 0
	for i, r := range lv.Recoveries {
		judged += b2i(r.Judged)
		if i == shownRecoveries {
			fmt.Fprintf(w, "  ... and %d more stopped holder(s)\n", len(lv.Recoveries)-i)
			break
		}
		fmt.Fprintf(w, "  - %s\n", recoveryLine(r, ttl))
	}
	if judged > 0 {
		fmt.Fprintf(w, "  recovery, %d judged: max %s%s", judged, dur(lv.MaxRecovery), inTTLs(lv.MaxRecovery, ttl))
		if lv.MedianRecovery > 0 {
			fmt.Fprintf(w, ", median of those recovered %s%s", dur(lv.MedianRecovery), inTTLs(lv.MedianRecovery, ttl))
		}
		fmt.Fprintln(w)
	}
	if lv.FreeWhileTrying >= 0 {
		stuck := 0
		for _, s := range lv.Stretches {
			stuck += b2i(s.Stuck)
		}
		fmt.Fprintf(w, "  node-down windows: a key was free while a pod tried %.1f%% of the time a majority of the lock's "+
			"nodes was up; %d stretch(es) past the bound\n", 100*lv.FreeWhileTrying, stuck)
	}
}

// recoveryLine is one stopped holder in words.
func recoveryLine(r checker.Recovery, ttl time.Duration) string {
	who := fmt.Sprintf("client %d %s at %s", r.Client, r.Cause, history.Seconds(r.At))
	if r.Key != "" {
		who += " holding " + r.Key
	}
	switch {
	case !r.Judged:
		return who + ": not judged: " + r.Why
	case r.Recovered && r.Stuck:
		return fmt.Sprintf("%s: client %d acquired it %s later%s, past the bound %s: slow", who, r.By, dur(r.After), inTTLs(r.After, ttl),
			dur(r.Bound))
	case r.Recovered:
		return fmt.Sprintf("%s: client %d acquired it %s later%s, within the bound %s", who, r.By, dur(r.After), inTTLs(r.After, ttl),
			dur(r.Bound))
	}
	return fmt.Sprintf("%s: stuck: nobody acquired it for %s%s, to the end (bound %s)", who, dur(r.After), inTTLs(r.After, ttl),
		dur(r.Bound))
}

// dur shows a liveness duration: "660 ms", "1.590 s", or as Go writes it
// below a millisecond (a history built by hand may count nanoseconds).
func dur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%d ms", d.Round(time.Millisecond).Milliseconds())
	}
	return d.String()
}

// inTTLs is " (2.20 TTLs)", or nothing when the history records no TTL:
// a multiple of a lease nobody recorded would be made up.
func inTTLs(d, ttl time.Duration) string {
	if ttl <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%.2f TTLs)", float64(d)/float64(ttl))
}
