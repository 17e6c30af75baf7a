package checker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

const msNs = int64(1_000_000)

// srvHist builds a history of operations and witness events (times in ms).
type srvHist struct{ h history.History }

func newSrv(lockNodes int, nodes ...string) *srvHist {
	s := &srvHist{h: history.History{Header: history.Header{Format: history.FormatVersion, Lock: "token", LockNodes: lockNodes, Keys: []string{"order:1"}}}}
	for _, n := range nodes {
		s.seen(history.WitnessWatches, n, "", 0, 0)
	}
	return s
}

func (s *srvHist) add(e history.Event) *srvHist {
	e.ID = int64(len(s.h.Events))
	if e.Outcome == 0 {
		e.Outcome = history.Ok
	}
	s.h.Events = append(s.h.Events, e)
	s.h.End = max(s.h.End, e.Return)
	return s
}

func (s *srvHist) seen(op, node, value string, at, deadline int64) *srvHist {
	key := "order:1"
	if op == history.WitnessWatches {
		key = ""
	}
	return s.add(history.Event{Kind: history.Witness, Client: -1, Key: key, Token: value,
		Call: at * msNs, Return: at * msNs,
		Window: history.WitnessWindow(history.ServerAct{Node: node, Act: op, Deadline: deadline * msNs})})
}

func (s *srvHist) op(kind history.Kind, client int, tok string, call, ret int64, out history.Outcome) *srvHist {
	return s.add(history.Event{Kind: kind, Client: client, Key: "order:1", Token: tok, Call: call * msNs, Return: ret * msNs, Outcome: out})
}

func checkSrv(t *testing.T, s *srvHist) *checker.Report {
	t.Helper()
	s.h.End += 10 * msNs
	return checker.Check(context.Background(), &s.h, checker.Options{})
}

// A failover's split brain as the server shows it: the old primary still
// holds client 1's lease when the promoted replica gives the key to
// client 2. Two leases in force at once on one service address, found
// and not decisive.
func TestServerExclusiveFindsTwoLeasesOnTwoNodes(t *testing.T) {
	s := newSrv(1, "node0", "node1").
		op(history.Acquire, 1, "tokA", 0, 2, history.Ok).seen(history.ServerSet, "node0", "tokA", 1, 301).
		op(history.Acquire, 2, "tokB", 100, 102, history.Ok).seen(history.ServerSet, "node1", "tokB", 101, 401).
		op(history.Release, 2, "tokB", 150, 152, history.Ok).seen(history.ServerDel, "node1", "tokB", 151, 0).
		op(history.Release, 1, "tokA", 200, 202, history.Ok).seen(history.ServerDel, "node0", "tokA", 201, 0)
	rep := checkSrv(t, s)
	r := rep.Result(checker.ServerExclusive)
	if r == nil || r.Status != checker.Fail || r.Decisive {
		t.Fatalf("server-exclusive %+v, want a non-decisive fail", r)
	}
	if !strings.Contains(r.Violations[0].Summary, "two leases on order:1 at once for 50 ms") {
		t.Errorf("sentence %q", r.Violations[0].Summary)
	}
	// A replica's copy of the same value is no second lease.
	s = newSrv(1, "node0", "node1").
		op(history.Acquire, 1, "tokA", 0, 2, history.Ok).seen(history.ServerSet, "node0", "tokA", 1, 301).
		seen(history.ServerSet, "node1", "tokA", 2, 301).
		op(history.Release, 1, "tokA", 200, 202, history.Ok).seen(history.ServerDel, "node0", "tokA", 201, 0).
		op(history.Acquire, 2, "tokB", 203, 204, history.Ok).seen(history.ServerSet, "node0", "tokB", 203, 503).
		seen(history.ServerDel, "node1", "tokA", 204, 0).seen(history.ServerSet, "node1", "tokB", 205, 503)
	if r := checkSrv(t, s).Result(checker.ServerExclusive); r.Status != checker.Pass {
		t.Errorf("replication lag reported as two leases: %+v", r.Violations)
	}
}

// A paused holder's belief outlived its lease while the server gave the
// key to another pod.
func TestStaleBeliefSeesABeliefOutliveItsLease(t *testing.T) {
	s := newSrv(1, "node0").
		op(history.Acquire, 1, "tokA", 0, 2, history.Ok).seen(history.ServerSet, "node0", "tokA", 1, 301).
		seen(history.ServerExpired, "node0", "tokA", 305, 0).
		op(history.Acquire, 2, "tokB", 300, 306, history.Ok).seen(history.ServerSet, "node0", "tokB", 305, 605).
		op(history.Release, 1, "tokA", 500, 501, history.Refused).
		op(history.Release, 2, "tokB", 510, 511, history.Ok).seen(history.ServerDel, "node0", "tokB", 511, 0)
	r := checkSrv(t, s).Result(checker.StaleBelief)
	if r.Status != checker.Fail || r.Decisive || r.ViolationCount != 1 {
		t.Fatalf("stale-belief %+v", r)
	}
	want := "client 1 believed it held order:1 until 0.500 s, but the server dropped its lease at 0.301 s (expired on node0)"
	if !strings.Contains(r.Violations[0].Summary, want) {
		t.Errorf("sentence %q, want %q", r.Violations[0].Summary, want)
	}
}

// The orphan-release case: client 1's acquire timed out but its SET
// landed late; its release then succeeded while client 2 (paused past its
// lease) still believed it held. The beliefs say a foreign release; the
// server shows client 1 deleted its own value: settled, not a violation.
// Where the server shows client 2's value deleted, it is confirmed.
func TestForeignReleaseSettledByWhoseValueTheServerDeleted(t *testing.T) {
	base := func() *srvHist {
		return newSrv(1, "node0").
			op(history.Acquire, 2, "tokB", 0, 2, history.Ok).seen(history.ServerSet, "node0", "tokB", 1, 301).
			seen(history.ServerExpired, "node0", "tokB", 310, 0).
			op(history.Acquire, 1, "", 300, 400, history.Indefinite)
	}
	s := base().seen(history.ServerSet, "node0", "tokX", 350, 650).
		op(history.Release, 1, "", 450, 452, history.Ok).seen(history.ServerDel, "node0", "tokX", 451, 0)
	r := checkSrv(t, s).Result(checker.ForeignRelease)
	if r.Status != checker.Pass || len(r.Settled) != 1 || !strings.Contains(r.Settled[0], "not client 2's: its own SET") {
		t.Fatalf("foreign-release %+v, want a pass with the orphan settled", r)
	}
	// The same beliefs without a witness: the rule stands.
	var blind srvHist
	blind.h.Header = s.h.Header
	for _, e := range s.h.Events {
		if e.Kind != history.Witness {
			blind.add(e)
		}
	}
	if r := checkSrv(t, &blind).Result(checker.ForeignRelease); r.Status != checker.Fail {
		t.Errorf("without the witness the orphan rule did not hold: %+v", r)
	}
}
