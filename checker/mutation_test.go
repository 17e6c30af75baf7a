package checker_test

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// Mutation tests: take real recorded passing histories, inject one kind of
// violation, and require the checker to catch it.

func clone(h *history.History) *history.History {
	c := *h
	c.Events = append([]history.Event(nil), h.Events...)
	return &c
}

func indexOf(h *history.History, id int64) int {
	for i, e := range h.Events {
		if e.ID == id {
			return i
		}
	}
	return -1
}

// consecutiveHolds returns two holds on one key, the second the very next
// hold on that key and by another client, both ended by a release, with a
// critical section (read and write) inside each.
func consecutiveHolds(t *testing.T, h *history.History) (checker.Hold, checker.Hold) {
	t.Helper()
	holds := checker.Holds(h)
	for i, a := range holds {
		if a.EndKind != history.Release || readIn(h, a) < 0 || writeIn(h, a) < 0 {
			continue
		}
		for _, b := range holds[i+1:] {
			if b.Key != a.Key {
				continue
			}
			if b.Client != a.Client && b.EndKind == history.Release && readIn(h, b) >= 0 && writeIn(h, b) >= 0 {
				return a, b
			}
			break // the next hold on the key is not a usable one
		}
	}
	t.Fatal("no two consecutive holds with critical sections")
	return checker.Hold{}, checker.Hold{}
}

// readIn and writeIn find the accepted read and write inside a hold.
func readIn(h *history.History, hd checker.Hold) int  { return opIn(h, hd, history.Read) }
func writeIn(h *history.History, hd checker.Hold) int { return opIn(h, hd, history.Write) }

func opIn(h *history.History, hd checker.Hold, k history.Kind) int {
	for i, e := range h.Events {
		if e.Kind == k && e.Outcome == history.Ok && e.Client == hd.Client && e.Key == hd.Key && e.Call >= hd.Start && e.Call <= hd.End {
			return i
		}
	}
	return -1
}

type mutation struct {
	name  string
	apply func(t *testing.T, h *history.History)
	// caught lists the properties that must fail, and a phrase one of
	// their violations must contain.
	caught []checker.Property
	phrase string
}

var mutations = []mutation{
	{
		name: "release delayed into the next hold",
		apply: func(t *testing.T, h *history.History) {
			a, b := consecutiveHolds(t, h)
			rel := &h.Events[indexOf(h, a.EndID)]
			rel.Call = b.Start + 1000
			rel.Return = rel.Call + 1000
		},
		caught: []checker.Property{checker.MutualExclusion},
		phrase: "overlap",
	},
	{
		name: "second holder reads and writes a stale value",
		apply: func(t *testing.T, h *history.History) {
			a, b := consecutiveHolds(t, h)
			ra, rb := h.Events[readIn(h, a)], &h.Events[readIn(h, b)]
			rb.Value = ra.Value
			h.Events[writeIn(h, b)].Value = ra.Value + 1
		},
		caught: []checker.Property{checker.ResourceLinearizable},
		phrase: "one increment lost",
	},
	{
		name: "a read returns a value never written",
		apply: func(t *testing.T, h *history.History) {
			_, b := consecutiveHolds(t, h)
			h.Events[readIn(h, b)].Value += 1000
		},
		caught: []checker.Property{checker.ResourceLinearizable},
		phrase: "read",
	},
	{
		name: "a write that happened is recorded as refused",
		apply: func(t *testing.T, h *history.History) {
			a, _ := consecutiveHolds(t, h)
			h.Events[writeIn(h, a)].Outcome = history.Refused
		},
		caught: []checker.Property{checker.ResourceLinearizable},
		phrase: "",
	},
	{
		// The holder's next acquire ends its hold (it cannot hold twice),
		// so the overlap lasts until then.
		name: "a release is dropped",
		apply: func(t *testing.T, h *history.History) {
			a, _ := consecutiveHolds(t, h)
			i := indexOf(h, a.EndID)
			h.Events = append(h.Events[:i], h.Events[i+1:]...)
		},
		caught: []checker.Property{checker.MutualExclusion},
		phrase: "while client",
	},
	{
		name: "a late release deletes the next holder's lock",
		apply: func(t *testing.T, h *history.History) {
			a, b := consecutiveHolds(t, h)
			rel := &h.Events[indexOf(h, a.EndID)]
			rel.Call, rel.Return, rel.Outcome, rel.Err = b.Start+1000, b.Start+2000, history.Ok, ""
		},
		caught: []checker.Property{checker.MutualExclusion, checker.ForeignRelease},
		phrase: "removed a lock it no longer held",
	},
	{
		name:   "a holder crashes and nobody gets its key again",
		apply:  crashForGood,
		caught: []checker.Property{checker.DeadlockFree},
		phrase: "to the end of the cell (bound 50 ms): stuck",
	},
}

// crashForGood crashes the first holder that released (its pod-crash
// window, its abandon in place of the release) and leaves its key taken:
// every later acquire of the key is refused, and what the holders did
// with it is gone. The recorded cell is 0.4 s long, so the header gives a
// bound it can show (a scenario's recover_within).
func crashForGood(t *testing.T, h *history.History) {
	a, _ := consecutiveHolds(t, h)
	t0 := a.Start + 1000
	kept := h.Events[:0]
	for _, e := range h.Events {
		switch {
		case e.Key != a.Key || e.Call < t0:
		case e.Kind == history.Acquire && e.Client != a.Client:
			e.Outcome, e.Token, e.Fence = history.Refused, "", 0
		default:
			continue // the key's holds, reads and writes after the crash
		}
		kept = append(kept, e)
	}
	kept = append(kept,
		history.Event{Kind: history.Fault, Client: -1, Call: t0, Return: t0 + 1000, Outcome: history.Ok,
			Window: history.FaultWindow("pod-crash", history.Hit{Pods: []int{a.Client}, StopsHolder: true, Abandons: true})},
		history.Event{Kind: history.Abandon, Client: a.Client, Key: a.Key, Call: t0 + 500, Return: t0 + 500, Outcome: history.Ok,
			Err: history.Crashed})
	h.Events = kept
	h.Header.TTL, h.Header.RecoverWithin = 20*time.Millisecond, 50*time.Millisecond
	// A recorder numbers its lines in time order; the chunk reader relies on it.
	slices.SortStableFunc(h.Events, func(x, y history.Event) int { return cmp.Compare(x.Call, y.Call) })
	h.End = 0
	for i := range h.Events {
		h.Events[i].ID = int64(i)
		h.End = max(h.End, h.Events[i].Return)
	}
}

func TestMutationsOfRecordedHistoriesAreCaught(t *testing.T) {
	for _, file := range []string{"recorded-token.jsonl", "recorded-fenced-3keys.jsonl"} {
		base := load(t, file)
		if rep := check(t, base); rep.Verdict != checker.Pass {
			t.Fatalf("%s: the unmutated history must pass, got %s", file, rep.Verdict)
		}
		for _, m := range mutations {
			t.Run(file+"/"+m.name, func(t *testing.T) {
				h := clone(base)
				m.apply(t, h)
				rep := check(t, h)
				text := ""
				for _, p := range m.caught {
					r := rep.Result(p)
					if r.Status != checker.Fail {
						t.Fatalf("%s: %s, want fail (%s)", p, r.Status, r.Note)
					}
					for _, v := range r.Violations {
						text += v.Summary + "\n"
					}
				}
				if !strings.Contains(text, m.phrase) {
					t.Fatalf("no violation mentions %q:\n%s", m.phrase, text)
				}
				// Where the resource checks fences, the verdict rests on it alone.
				fenced := h.Header.Fencing != "" && h.Header.Fencing != "off"
				decisive := !fenced || m.caught[0] != checker.MutualExclusion
				if decisive && rep.Verdict != checker.Fail {
					t.Fatalf("verdict %s, want fail", rep.Verdict)
				}
			})
		}
	}
}

// TestOrphanReleaseIsForeign: a release that returns ok from a client
// whose acquire was refused, while another client holds the key, removed
// a lock that was not its own.
func TestOrphanReleaseIsForeign(t *testing.T) {
	h := load(t, "recorded-token.jsonl")
	holds := checker.Holds(h)
	var target checker.Hold
	for _, hd := range holds {
		if hd.EndKind == history.Release && hd.End-hd.Start > 1000 {
			target = hd
			break
		}
	}
	other := (target.Client + 1) % h.Header.Clients
	mid := (target.Start + target.End) / 2
	h = clone(h)
	h.Events = append(h.Events,
		history.Event{ID: 1 << 40, Kind: history.Acquire, Client: other, Key: target.Key, Call: mid - 10, Return: mid - 5, Outcome: history.Refused},
		history.Event{ID: 1<<40 + 1, Kind: history.Release, Client: other, Key: target.Key, Call: mid, Return: mid + 5, Outcome: history.Ok})
	r := check(t, h).Result(checker.ForeignRelease)
	if r.Status != checker.Fail || !strings.Contains(r.Violations[0].Summary, "held nothing") {
		t.Fatalf("orphan release: %s %+v", r.Status, r.Violations)
	}
}

// TestResourceAcceptingALowerFenceIsCaught: a resource that lets a stale
// fence through after accepting a higher one breaks its promise, whatever
// the counter shows.
func TestResourceAcceptingALowerFenceIsCaught(t *testing.T) {
	h := clone(load(t, "recorded-fenced-3keys.jsonl"))
	if r := check(t, h).Result(checker.FenceOrder); r.Status != checker.Pass || !r.Decisive {
		t.Fatalf("recorded fenced history: fence-order %s (decisive %v)", r.Status, r.Decisive)
	}
	// Give a late accepted write the fence of the key's first holder.
	var first uint64
	key := ""
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind != history.Write || e.Outcome != history.Ok || e.Fence == 0 {
			continue
		}
		if key == "" {
			key, first = e.Key, e.Fence
		} else if e.Key == key && e.Fence > first+1 {
			e.Fence = first
			break
		}
	}
	rep := check(t, h)
	r := rep.Result(checker.FenceOrder)
	if r.Status != checker.Fail || rep.Verdict != checker.Fail || !strings.Contains(r.Violations[0].Summary, "after accepting fence") {
		t.Fatalf("stale fence accepted: %s, verdict %s, %+v", r.Status, rep.Verdict, r.Violations)
	}
	h.Header.Fencing = "off"
	if r := check(t, h).Result(checker.FenceOrder); r.Decisive {
		t.Fatal("fence order is judged although the resource checks no fences")
	}
}
