package reports

import (
	"fmt"
	"strings"

	"github.com/lockchaos/lockchaos/history"
)

// Renewals on the timeline: a renewal bug that shortens a lease shows as
// a hold whose ticks stop, or turn red, before the lease should end.

// renewalMark is a tick on the holder's lane at a renewal: ok, refused
// (the key was no longer the holder's) or indefinite (no answer).
func renewalMark(e history.Event) mark {
	m := mark{client: e.Client, at: e.Call, kind: markRenewOK}
	took := fmt.Sprintf("%.1f ms", float64(e.Return-e.Call)/1e6)
	switch e.Outcome {
	case history.Ok:
		m.title = fmt.Sprintf("client %d renewed %s at %s (took %s)", e.Client, e.Key, history.Seconds(e.Call), took)
	case history.Refused:
		m.kind = markRenewRefused
		m.title = fmt.Sprintf("client %d's renewal of %s at %s refused: the key was no longer its own", e.Client, e.Key,
			history.Seconds(e.Call))
	default:
		m.kind = markRenewIndefinite
		m.title = fmt.Sprintf("client %d's renewal of %s at %s indefinite after %s: %s", e.Client, e.Key,
			history.Seconds(e.Call), took, e.Err)
	}
	return m
}

// drawRenewal draws a renewal on top of its lane: a short green tick when
// it succeeded; a taller one capped by a bar, red when refused and orange
// when it had no answer.
func drawRenewal(b *strings.Builder, m mark, px float64, y int) {
	if m.kind == markRenewOK {
		fmt.Fprintf(b, `<line class="renew-ok" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#2e7d32" `+
			`stroke-width="2"><title>%s</title></line>`, px, y-3, px, y+6, esc(m.title))
		return
	}
	cls, colour := "renew-refused", "#d0021b"
	if m.kind == markRenewIndefinite {
		cls, colour = "renew-indefinite", "#d98c00"
	}
	fmt.Fprintf(b, `<path class="%s" d="M%.1f %dv11M%.1f %dh6" stroke="%s" stroke-width="2" fill="none">`+
		`<title>%s</title></path>`, cls, px, y-3, px-3, y-3, colour, esc(m.title))
}
