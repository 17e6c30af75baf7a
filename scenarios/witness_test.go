package scenarios_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// roundedLease is a lock like a framework's that takes its expiry in
// whole seconds and adds half a second of tolerance: at the catalog's
// 300 ms TTL its real lease is 500 ms.
var roundedLease = lockimpl.Spec{Name: "acme-rounded", Nodes: 1,
	New: func(env lockimpl.Env) (lockimpl.Locker, error) {
		return lockimpl.NewToken(env.Clients[0], lockimpl.TokenConfig{TTL: env.TTL.Truncate(time.Second) + 500*time.Millisecond})
	}}

// A lock whose real lease is longer than the cell's TTL is never judged
// exercised by a pause that did not outlast it: the witness saw each
// lease end on the server after the pause ended, so every window is
// judged not exercised on an observed lease, and the cell is
// inconclusive, never a pass. Without the witness the same lock is
// "exercised" on the TTL's word, which is the false claim the witness is
// there to stop.
func TestLeaseLongerThanTheTTLIsNeverExercisedByAShorterPause(t *testing.T) {
	dir := t.TempDir()
	sc := short("gc-pause", 1500*time.Millisecond)
	res := scenarios.Run(context.Background(), sc, roundedLease, scenarios.Safe, scenarios.Options{Backend: process.Backend{}, Seed: 11, OutDir: dir})
	if res.Outcome != results.Inconclusive {
		t.Fatalf("with the witness: %s, want inconclusive (no pause outlasted a 500 ms lease)", res.Summary())
	}
	h, err := history.LoadFile(res.History)
	if err != nil {
		t.Fatal(err)
	}
	judged := 0
	for _, e := range h.Events {
		if e.Kind != history.Exercised {
			continue
		}
		j := history.JudgmentOf(e)
		judged++
		if j.Exercised {
			t.Errorf("window judged exercised: %s", j.Detail)
		}
		// On a loaded machine a pause can run past its time and the lease
		// end inside it; the window is then not exercised because nobody
		// tried meanwhile, which the judgment must say instead (CI: "the
		// server removed client 2's lease ... during the pause, but no
		// other pod tried for order:1 before it ended").
		if j.Lease == history.LeaseObserved && !strings.Contains(j.Detail, "the lease outlived the pause") &&
			!strings.Contains(j.Detail, "no other pod tried") {
			t.Errorf("an observed lease end that says neither that the lease outlived the pause nor that nobody tried: %s", j.Detail)
		}
		if strings.Contains(j.Detail, "lapsed at") && j.Lease != history.LeaseAssumed {
			t.Errorf("a TTL-based sentence on an observed lease: %s", j.Detail)
		}
	}
	if judged == 0 {
		t.Fatalf("no window judged: %s", res.Summary())
	}
	blind := scenarios.Run(context.Background(), sc, roundedLease, scenarios.Safe,
		scenarios.Options{Backend: process.Backend{}, Seed: 11, OutDir: t.TempDir(), NoWitness: true})
	if blind.Evidence.Exercised == 0 {
		t.Errorf("without the witness: %s; want windows judged exercised from the TTL", blind.Summary())
	}
	for _, m := range blind.Evidence.Moments {
		if m.Exercised && !strings.Contains(m.Detail, "assumed from the TTL") {
			t.Errorf("a TTL-based judgment that does not say so: %s", m.Detail)
		}
	}
}
