package margins_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/margins"
)

func lock(t *testing.T, name string) lockimpl.Spec {
	t.Helper()
	s, err := lockimpl.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The measured boundary agrees with the design's within the search's
// resolution: a lease lock without fencing breaks under a pause that
// outlasts what was left of its lease (about one TTL); a fenced lock
// never does; a lock with a 10x lease breaks past 10 TTLs. The same seed
// gives the same margins.
func TestMarginsAgreeWithTheTheoryInTheSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("a search of three locks")
	}
	pause, _ := margins.FamilyNamed("pause")
	locks := []lockimpl.Spec{lock(t, "token"), lock(t, "fenced"), lock(t, "long-ttl")}
	if raceEnabled {
		locks = locks[:1]
	}
	search := func() []margins.Margin {
		cfg := margins.Config{Locks: locks,
			Families: []margins.Family{pause}, Seeds: 4, Seed: 7, Resolution: 0.05, OutDir: t.TempDir(),
			Backend: sim.New(func(f func()) { synctest.Test(t, func(*testing.T) { f() }) })}
		ms, err := margins.Search(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	ms := search()
	for _, m := range ms {
		if !m.Agrees {
			t.Errorf("%s/%s: measured %v (broke %v), predicted %+v: they disagree", m.Family, m.Lock, m.At, m.Broke, m.Predicted)
		}
	}
	if !ms[0].Broke || ms[0].At < 250*time.Millisecond || ms[0].At > 330*time.Millisecond {
		t.Errorf("token breaks at %v under a pause, want about one 300 ms TTL", ms[0].At)
	}
	if len(ms) > 1 && ms[1].Broke {
		t.Errorf("fenced broke at %v", ms[1].At)
	}
	if len(ms) > 2 && (!ms[2].Broke || ms[2].At < 2700*time.Millisecond) {
		t.Errorf("long-ttl breaks at %v, want about its 3 s lease", ms[2].At)
	}
	again := search()
	for i := range ms {
		if ms[i].At != again[i].At || ms[i].Broke != again[i].Broke {
			t.Errorf("%s: %v then %v with the same seed", ms[i].Lock, ms[i].At, again[i].At)
		}
	}
}

func TestUnknownFamilyListsTheValidOnes(t *testing.T) {
	_, err := margins.FamilyNamed("pasue")
	if err == nil || !contains(err.Error(), "did you mean pause") || !contains(err.Error(), "slow-reply") {
		t.Errorf("error %v", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// A restart breaks a lock when it is quick, not when it is slow: the
// search starts from an immediate restart and finds the longest delay
// that still breaks it, inside the holder's critical section. Under
// latency, naive's unconditional DEL (landing two latencies late) breaks
// it at about half the latency the token lock takes.
func TestBoundariesBelowAndBlindReleases(t *testing.T) {
	if testing.Short() {
		t.Skip("two searches")
	}
	run := func(fam string, locks ...lockimpl.Spec) []margins.Margin {
		f, err := margins.FamilyNamed(fam)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := margins.Search(context.Background(), margins.Config{Locks: locks, Families: []margins.Family{f}, Seeds: 6,
			Seed: 3, OutDir: t.TempDir(), Backend: sim.New(func(f func()) { synctest.Test(t, func(*testing.T) { f() }) })})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if !m.Agrees {
				t.Errorf("%s/%s: measured %v (broke %v), predicted %+v: they disagree", m.Family, m.Lock, m.At, m.Broke, m.Predicted)
			}
		}
		return ms
	}
	r := run("restart-delay", lock(t, "token"))[0]
	if !r.BreaksBelow || !r.Broke || r.At > 165*time.Millisecond || r.Held <= r.At {
		t.Errorf("token under restarts: broke %v up to %v, held from %v; want up to about its 150 ms critical sections",
			r.Broke, r.At, r.Held)
	}
	if raceEnabled {
		return
	}
	l := run("latency", lock(t, "naive"), lock(t, "token"))
	if !l[0].Broke || !l[1].Broke || l[0].At > l[1].At*2/3 {
		t.Errorf("latency: naive breaks at %v, token at %v; want naive at about half", l[0].At, l[1].At)
	}
}
