package scenarios

import (
	"testing"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// TestLookFor: a running cell expected safe and live is not looked at; one
// whose expected failure lies in one group, the other held to pass, ends
// at any violation; the rest need each group's verdict.
func TestLookFor(t *testing.T) {
	cases := []struct {
		e    Expect
		want look
	}{
		{andLive(Safe), lookNone},
		{Safe.Expected(), lookNone},
		{andLive(Unsafe), lookAny},
		{andStuck(Safe), lookAny},
		{andLive(Either), lookAny},
		{Expect{Safety: Either, Liveness: Either}, lookAny},
		{andStuck(Unsafe), lookGroups},
		{andStuck(Either), lookGroups},
		{Expect{Safety: Unsafe, Liveness: Either}, lookGroups},
		{Expect{MayFail: []checker.Property{checker.MutualExclusion}}.Expected(), lookGroups},
	}
	for _, c := range cases {
		if got := lookFor(c.e); got != c.want {
			t.Errorf("%s: look %d, want %d", c.e, got, c.want)
		}
	}
}

// TestExpectHelper: the catalog's helper keeps one word short and takes a
// whole expectation where a lock needs one.
func TestExpectHelper(t *testing.T) {
	m := expect(Unsafe, andStuck(Safe), nil, Safe, Either)
	if len(m) != 4 || m[lockimpl.NameNaive].String() != "unsafe" || m[lockimpl.NameToken].String() != "safety safe, liveness stuck" {
		t.Errorf("%v", m)
	}
	if _, ok := m[lockimpl.NameTokenWatchdog]; ok {
		t.Error("nil did not leave token-watchdog out")
	}
}
