package lockchaostest_test

import (
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/lockchaostest"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// A user's lock at its production TTL: the search runs in virtual time,
// so a 10 s TTL costs what 300 ms does, and reads "breaks under pauses of
// about 10 s".
func TestMarginsOfAUsersLockAtItsTTL(t *testing.T) {
	if testing.Short() {
		t.Skip("a search")
	}
	mine := lockimpl.Spec{Name: "acme", Nodes: 1, New: func(env lockimpl.Env) (lockimpl.Locker, error) {
		return lockimpl.NewToken(env.Clients[0], lockimpl.TokenConfig{TTL: env.TTL})
	}}
	ms := lockchaostest.Margins(t, mine, lockchaostest.MarginOptions{TTL: 10 * time.Second, Families: []string{"slow-holder"}, Seeds: 3})
	if len(ms) != 1 || !ms[0].Broke || ms[0].At < 9500*time.Millisecond || ms[0].At > 11*time.Second {
		t.Fatalf("margins %+v, want a break at about 10 s", ms)
	}
	if !ms[0].Agrees {
		t.Errorf("measured %v, predicted %+v: they disagree", ms[0].At, ms[0].Predicted)
	}
}
