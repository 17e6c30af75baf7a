package checker

import (
	"fmt"

	"github.com/lockchaos/lockchaos/history"
)

// serverFacts is the server's view a check reads: the witnesses' leases
// and the lock's node count.
type serverFacts struct {
	*history.ServerView
	lockNodes int
	// lockKeys are the server keys a holder's token was written to (not
	// a fence counter beside one), so far: phantom-lease's.
	lockKeys map[string]bool
	// ph is what phantom-lease carries over a cut (nil: a whole history).
	ph *phantomCarry
}

// releaseHeard is how long after a release returned its delete may reach
// the witness: it hears of a write a little after the server made it,
// sometimes after the writer had its reply.
const releaseHeard = 50_000_000 // 50 ms

// settle asks the server about a release that succeeded from a client
// holding nothing while o held the key (the orphan-release rule). The
// beliefs cannot tell a release that deleted o's lease from one that
// deleted the releaser's own SET, landed after its acquire timed out; the
// witness saw which value went. It returns words to add to the
// violation's sentence when the server confirms it (seen), or, when the
// server shows the release removed no one else's lease, why it is no
// violation (settled). Neither where no witness watched the key's node.
func (s serverFacts) settle(rel history.Event, o Hold) (seen, settled string) {
	if s.ServerView == nil || !s.Any() {
		return "", ""
	}
	theirs, ok := s.LeaseFor(o, s.lockNodes)
	if !ok {
		return "", ""
	}
	for _, c := range theirs.Copies {
		if !s.Watched(c.Node, rel.Call) {
			return "", ""
		}
	}
	var gone *history.ServerLease
	for i := range s.Leases {
		l := &s.Leases[i]
		if l.Key == rel.Key && l.Ended == history.LeaseDeleted && l.Removed >= rel.Call && l.Removed <= rel.Return+releaseHeard &&
			(gone == nil || l.Removed < gone.Removed) {
			gone = l
		}
	}
	if gone == nil {
		return "", fmt.Sprintf("client %d's release of %s at %s deleted nothing on the server (client %d's lease stayed)",
			rel.Client, rel.Key, history.Seconds(rel.Call), o.Client)
	}
	for _, c := range theirs.Copies {
		if c.Node == gone.Node && c.SetOp == gone.SetOp {
			return fmt.Sprintf("; the server saw it delete client %d's value (%s on %s at %s)",
				o.Client, short(gone.Value), gone.Node, history.Seconds(gone.Removed)), ""
		}
	}
	return "", fmt.Sprintf("client %d's release of %s at %s deleted a value written at %s, not client %d's: its own SET, "+
		"landed after its acquire gave up", rel.Client, rel.Key, history.Seconds(rel.Call), history.Seconds(gone.Set), o.Client)
}
