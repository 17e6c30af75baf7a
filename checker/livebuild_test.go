package checker_test

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// ms is a history time of n milliseconds.
func ms(n float64) int64 { return int64(n * float64(time.Millisecond)) }

// lb builds a history in memory for the liveness tests, times in ms.
type lb struct{ h *history.History }

func newLB(hd history.Header) *lb {
	hd.Format = history.FormatVersion
	if hd.Lock == "" {
		hd.Lock = "token"
	}
	return &lb{h: &history.History{Header: hd}}
}

func (b *lb) add(e history.Event) *lb {
	b.h.Events = append(b.h.Events, e)
	b.h.End = max(b.h.End, e.Return)
	return b
}

// acq is an acquire attempt from call to ret (ms) with outcome o.
func (b *lb) acq(c int, key string, call, ret float64, o history.Outcome) *lb {
	e := history.Event{Kind: history.Acquire, Client: c, Key: key, Call: ms(call), Return: ms(ret), Outcome: o}
	if o == history.Ok {
		e.Token = fmt.Sprintf("t%d-%v", c, call)
	}
	return b.add(e)
}

func (b *lb) rel(c int, key string, call, ret float64, o history.Outcome) *lb {
	return b.add(history.Event{Kind: history.Release, Client: c, Key: key, Call: ms(call), Return: ms(ret), Outcome: o})
}

func (b *lb) renew(c int, key string, call, ret float64) *lb {
	return b.add(history.Event{Kind: history.Renew, Client: c, Key: key, Call: ms(call), Return: ms(ret), Outcome: history.Ok})
}

// point is a lost signal or an abandon (why: history.Crashed or Abandoned).
func (b *lb) point(k history.Kind, c int, key string, t float64, why string) *lb {
	return b.add(history.Event{Kind: k, Client: c, Key: key, Call: ms(t), Return: ms(t), Outcome: history.Ok, Err: why})
}

func (b *lb) window(fault string, call, ret float64, hit history.Hit) *lb {
	return b.add(history.Event{Kind: history.Fault, Client: -1, Call: ms(call), Return: ms(ret), Outcome: history.Ok,
		Window: history.FaultWindow(fault, hit)})
}

// tries adds refused attempts by the clients in turn, every step ms from
// from to to (each 1 ms long).
func (b *lb) tries(key string, from, to, step float64, clients ...int) *lb {
	for i, t := 0, from; t <= to; i, t = i+1, t+step {
		b.acq(clients[i%len(clients)], key, t, t+1, history.Refused)
	}
	return b
}

// end records an attempt of client 0 on a key nobody else uses, ending
// at t (ms): the history runs to t, as a file can show it.
// The header lists the key, when it lists keys: a loader refuses others.
func (b *lb) end(t float64) *lb {
	if k := b.h.Header.Keys; len(k) > 0 && !slices.Contains(k, "idle") {
		b.h.Header.Keys = append(slices.Clip(k), "idle")
	}
	return b.acq(0, "idle", t-1, t, history.Refused)
}

// done orders the events by call and numbers them in that order, as a
// recorder writes them.
func (b *lb) done() *history.History {
	slices.SortStableFunc(b.h.Events, func(x, y history.Event) int { return cmp.Compare(x.Call, y.Call) })
	for i := range b.h.Events {
		b.h.Events[i].ID = int64(i)
	}
	return b.h
}

// crashHeader is a cell of 6 pods on one key, TTL 300 ms (bound 660 ms).
func crashHeader() history.Header {
	return history.Header{Scenario: "pod-crash", Clients: 8, Keys: []string{"order:1"}, TTL: 300 * time.Millisecond,
		LockNodes: 1, Faults: []string{"pod-crash"}}
}

// crashed is client 3 holding order:1 from 0.1 s and crashing at 0.410 s.
func crashed() *lb {
	return newLB(crashHeader()).
		acq(3, "order:1", 100, 101, history.Ok).
		window("pod-crash", 410, 412, history.Hit{Pods: []int{3}, StopsHolder: true}).
		point(history.Abandon, 3, "order:1", 411, history.Crashed)
}
