package history

import (
	"strconv"
	"strings"
	"time"
)

// Formats 1 to 4 carried a window's payload as strings: a list of
// targets, some of them prefixed words ("stops-holder", "down=node0",
// "delay=450ms", "lease=observed", "as=KEY"), and a detail (a judgment's
// sentence, a witness's act, a probe's value), with Event.Value standing
// for a judgment's window, a probe's "exists" or a witness's deadline.
// They load into format 5's typed payloads here, and nowhere else.

// The words of formats 1 to 4 (Hit.Words writes them back for people).
const (
	wordStopsHolder  = "stops-holder"
	wordAbandons     = "abandons"
	wordBareMajority = "bare-majority"
	wordDown         = "down="
	wordDelay        = "delay="
	wordJump         = "jump="
	wordRestart      = "restart="
	wordDirection    = "direction="
	wordLease        = "lease="
	wordServerKey    = "as="
)

// legacyFormat is the last format whose windows are strings.
const legacyFormat = 4

// upgrade turns an event of formats 1 to 4 read with its old strings into
// format 5's: the payload typed, Value kept only where it is a resource's
// value, and a judgment's outcome moved into its payload (Ok: the point
// happened).
func upgrade(e *Event, fault string, targets []string, detail string) {
	switch e.Kind {
	case Fault:
		e.Window = FaultWindow(fault, hitOf(targets))
	case Exercised:
		j := &Judged{Window: e.Value, Exercised: e.Outcome == Ok, Detail: detail}
		var rest []string
		for _, t := range targets {
			if l, ok := strings.CutPrefix(t, wordLease); ok {
				j.Lease = l
			} else {
				rest = append(rest, t)
			}
		}
		e.Window = FaultWindow(fault, hitOf(rest))
		e.Window.Judgment = j
		e.Value, e.Outcome = 0, Ok
	case Probe:
		e.Window = ProbeWindow(first(targets), e.Value == 1, detail)
		e.Value = 0
	case Witness:
		a := ServerAct{Node: first(targets), Act: detail, Deadline: e.Value}
		for _, t := range targets {
			if k, ok := strings.CutPrefix(t, wordServerKey); ok {
				a.ServerKey = k
			}
		}
		e.Window = WitnessWindow(a)
		e.Value = 0
	default:
		if fault != "" || len(targets) > 0 || detail != "" {
			e.Window = FaultWindow(fault, hitOf(targets))
		}
	}
}

func first(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ss[0]
}

// hitOf reads a window's targets of formats 1 to 4.
func hitOf(targets []string) Hit {
	var h Hit
	for _, t := range targets {
		switch {
		case t == wordStopsHolder:
			h.StopsHolder = true
		case t == wordAbandons:
			h.Abandons = true
		case t == wordBareMajority:
			h.BareMajority = true
		case strings.HasPrefix(t, wordDown):
			h.Down = append(h.Down, t[len(wordDown):])
		case strings.HasPrefix(t, wordDirection):
			h.Direction = t[len(wordDirection):]
		case durationWord(t, wordDelay, &h.Delay), durationWord(t, wordJump, &h.Jump),
			durationWord(t, wordRestart, &h.Restart):
		case strings.Contains(t, "->"):
			h.Links = append(h.Links, t)
		case podWord(t, &h.Pods):
		default:
			h.Nodes = append(h.Nodes, t)
		}
	}
	return h
}

// durationWord reads prefix+duration ("delay=450ms") into d.
func durationWord(t, prefix string, d *time.Duration) bool {
	s, ok := strings.CutPrefix(t, prefix)
	if !ok {
		return false
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return false
	}
	*d = v
	return true
}

// podWord reads "clientN" into pods.
func podWord(t string, pods *[]int) bool {
	n, ok := strings.CutPrefix(t, "client")
	if !ok {
		return false
	}
	i, err := strconv.Atoi(n)
	if err != nil || i < 0 {
		return false
	}
	*pods = append(*pods, i)
	return true
}
