package verify

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/history"
)

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

func newJudge() *judge {
	return &judge{judged: map[int64]bool{}, pending: map[int64]history.Judgment{}}
}

func (j *judge) prepare(h *history.History, last bool) {
	unjudged := false
	for _, e := range h.Events {
		j.next = max(j.next, e.ID+1)
		if e.Kind == history.Exercised {
			j.judged[e.Judged().Window] = true
			delete(j.pending, e.Judged().Window)
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
