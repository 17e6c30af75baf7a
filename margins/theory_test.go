package margins

import (
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/lockimpl"
)

func spec(t *testing.T, name string) lockimpl.Spec {
	t.Helper()
	s, err := lockimpl.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func family(t *testing.T, name string) Family {
	t.Helper()
	f, err := FamilyNamed(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The theory's shape, lock by lock: what each lock's traits buy it.
func TestTheoryReadsTheLocksTraits(t *testing.T) {
	predict := func(lock, fam string) Prediction {
		f := family(t, fam)
		sc, err := f.scenario(time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		return Predict(spec(t, lock), f, sc)
	}
	for _, c := range []struct {
		lock, family string
		breaks       bool
		lo, hi       time.Duration
	}{
		// Redlock's node timeout (20% of the TTL) gives up a late answer.
		{"redlock", "slow-reply", false, 0, 0},
		{"redlock", "latency", false, 0, 0},
		// A late reply outlives the lease once it and the half-TTL work do.
		{"token", "slow-reply", true, 150 * time.Millisecond, 170 * time.Millisecond},
		// The watchdog's first renewal comes a third of the TTL late.
		{"token-watchdog", "slow-reply", true, 200 * time.Millisecond, 220 * time.Millisecond},
		// Naive's blind DEL lands two latencies late: half the token's.
		{"naive", "latency", true, 145 * time.Millisecond, 160 * time.Millisecond},
		{"token", "latency", true, 290 * time.Millisecond, 320 * time.Millisecond},
		// A restart breaks while the holder still works, fencing included.
		{"token", "restart-delay", true, 0, 150 * time.Millisecond},
		{"fenced", "restart-delay", true, 0, 150 * time.Millisecond},
		{"fenced", "pause", false, 0, 0},
		// A lagging replica loses the fresh lease, fence counter and all.
		{"fenced", "replica-lag", true, 0, 280 * time.Millisecond},
		{"redlock", "replica-lag", false, 0, 0},
	} {
		p := predict(c.lock, c.family)
		if p.Breaks != c.breaks || p.Lo != c.lo || p.Hi != c.hi || p.Why == "" {
			t.Errorf("%s/%s: predicted %+v, want breaks %v in [%v, %v]", c.family, c.lock, p, c.breaks, c.lo, c.hi)
		}
	}
}

// A family that breaks below its boundary scans from 0; others from their
// first rung; the cap is always the last.
func TestLadderStartsWhereTheFamilyDoes(t *testing.T) {
	restart, lag, pause := family(t, "restart-delay"), family(t, "replica-lag"), family(t, "pause")
	for _, c := range []struct {
		f           Family
		first, last float64
	}{{restart, 0, 10}, {lag, 0.05, 10}, {pause, 0.5, 10}} {
		l := ladder(c.f.first(), 10)
		if l[0] != c.first || l[len(l)-1] != c.last {
			t.Errorf("%s: ladder %v, want %v to %v", c.f.Name, l, c.first, c.last)
		}
	}
}
