package faults

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// otherPods is Pods under a name of its own: embedded, its field does not
// clash with the method Pods.
type otherPods interface{ Pods }

// releasingPods is a cell whose holders release before the kill lands
// the first misses times: Crash finds them holding nothing.
type releasingPods struct {
	otherPods     // the rest, never called
	alive, misses int
	crashed       []int
}

func (p *releasingPods) Alive() int { return p.alive }
func (p *releasingPods) Holder(context.Context, *rand.Rand) (int, string, error) {
	return len(p.crashed) + 1, "order:1", nil
}
func (p *releasingPods) Crash(_ context.Context, pod int) (string, error) {
	p.crashed = append(p.crashed, pod)
	p.alive--
	if len(p.crashed) <= p.misses {
		return "", nil
	}
	return "order:1", nil
}

// TestPodCrashStrikesAgainAfterAMiss: a crash that landed on a pod that
// had just released strikes another holder, each in a window of its own,
// until one dies holding; never below the pods a crash must leave alive.
func TestPodCrashStrikesAgainAfterAMiss(t *testing.T) {
	for _, c := range []struct {
		alive, misses, crashes int
	}{
		{alive: 8, misses: 0, crashes: 1},
		{alive: 8, misses: 2, crashes: 3},
		{alive: 4, misses: 5, crashes: 2}, // stops at minAlive
	} {
		pods := &releasingPods{alive: c.alive, misses: c.misses}
		windows := 0
		env := &Env{Pods: pods, TTL: 300 * time.Millisecond, Rand: rand.New(rand.NewPCG(1, 2)),
			Window: func(string, history.Hit) func() { windows++; return func() {} }}
		if err := (PodCrash{}).Inject(context.Background(), env); err != nil {
			t.Fatal(err)
		}
		if len(pods.crashed) != c.crashes || windows != c.crashes {
			t.Errorf("%d alive, %d misses: %d crash(es) in %d window(s), want %d", c.alive, c.misses, len(pods.crashed), windows, c.crashes)
		}
	}
}
