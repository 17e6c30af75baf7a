package checker

import (
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// cutShort amends deadlock-free's "stuck ... to the end of the cell" for
// a stopped holder whose lease the server still had due after the
// history ended. A cell ends early once a violation is decisive, so its
// history may stop before a lease longer than the bound ran out: the key
// was taken past the bound (the violation stands), but "to the end of the
// cell" read as a lock that never frees it. Where a witness saw the lease,
// the sentence says when it was due. A whole history only: a chunk's
// recoveries are settled when the file ends, without the server's view.
func cutShort(df *Result, lv Liveness, holds []Hold, srv serverFacts, end int64) {
	if !srv.Any() {
		return
	}
	for _, rc := range lv.Recoveries {
		if !rc.Stuck || rc.Recovered {
			continue
		}
		h, ok := holdAtStop(holds, rc)
		if !ok {
			continue
		}
		sh, ok := srv.LeaseFor(h, srv.lockNodes)
		if !ok {
			continue
		}
		due := sh.DueAt(rc.At, srv.lockNodes)
		if due <= end || due == history.Forever {
			continue
		}
		for i := range df.Violations {
			v := &df.Violations[i]
			if v.Key == rc.Key && v.Start == rc.At && len(v.Clients) > 0 && v.Clients[0] == rc.Client {
				v.Summary += fmt.Sprintf("; the history ended at %s, before the server's lease on %s was due "+
					"(%s, %s after the holder stopped; seen by the witness): the cell was cut short, so when the lock "+
					"would have freed it is not known", history.Seconds(end), rc.Key, history.Seconds(due),
					durText(time.Duration(due-rc.At)))
			}
		}
	}
}

// holdAtStop is the stopped holder's hold on its key when it stopped.
func holdAtStop(holds []Hold, rc Recovery) (Hold, bool) {
	var out Hold
	found := false
	for _, h := range holds {
		if h.Client == rc.Client && h.Key == rc.Key && h.Start <= rc.At && h.End >= rc.At {
			out, found = h, true
		}
	}
	return out, found
}
