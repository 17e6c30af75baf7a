package lockchaostest_test

import (
	"testing"

	"github.com/lockchaos/lockchaos/lockchaostest"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// myLockSpec is a user's Go lock: the token lock under a name of its own.
func myLockSpec(t *testing.T) lockimpl.Spec {
	t.Helper()
	token, err := lockimpl.Lookup(lockimpl.NameToken)
	if err != nil {
		t.Fatal(err)
	}
	token.Name, token.Doc = "my-token", "the token lock under another name: a user's Go lock"
	return token
}

// docs:begin choose
func TestWhereMyLockStands(t *testing.T) {
	tab := lockchaostest.Choose(t, myLockSpec(t), lockchaostest.ChooseOptions{
		Beside: []string{"token", "fenced"}, Scenarios: []string{"baseline", "gc-pause"}, Quick: true})
	for _, r := range tab.Rows {
		t.Logf("%s: %s", r.Name, r.Sentence)
	}
}

// docs:end choose

// A Go lock of the user's own in the which-lock table beside the
// built-in token lock, measured exactly like it: the same scenarios, a
// verdict per family, a cost over the same floor.
func TestChoosePutsAGoLockBesideTheReferences(t *testing.T) {
	tab := lockchaostest.Choose(t, myLockSpec(t), lockchaostest.ChooseOptions{Beside: []string{lockimpl.NameToken},
		Scenarios: []string{"baseline", "gc-pause"}, Quick: true, Seed: 11})
	rows := map[string]bool{}
	for _, r := range tab.Rows {
		rows[r.Name] = true
		if c := r.Cell("paused holder"); c == nil || c.Runs != 1 || c.Unsafe != 1 {
			t.Errorf("%s paused holder: %+v, want unsafe 1/1 (the token lock's design)", r.Name, c)
		}
		if r.Cost == nil || r.Cost.FloorOp != "PING" || r.Cost.RatioP50 < 1 {
			t.Errorf("%s cost %+v", r.Name, r.Cost)
		}
		if r.Name == "my-token" && !r.User {
			t.Error("the user's lock is not marked as theirs")
		}
	}
	if !rows["token"] || !rows["my-token"] || len(rows) != 2 {
		t.Fatalf("rows %v, want token and my-token", rows)
	}
}
