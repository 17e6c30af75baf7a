package scenarios_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

// LeaseNote speaks when the leases the witness saw differ from what the
// lock declares, and only then: every built-in lock, long-ttl's declared
// 10 TTLs and no-ttl's declared eternity included, runs its baseline on
// the simulation without a note; the token lock with a lease of its own
// (a library that rounds the TTL up to a whole second) gets one naming
// the lease seen, until its spec declares that lease.
func TestLeaseNoteSpeaksOnlyOfAnUndeclaredLease(t *testing.T) {
	base, err := scenarios.Get("baseline")
	if err != nil {
		t.Fatal(err)
	}
	base.Duration = time.Second
	note := func(lock lockimpl.Spec) string {
		t.Helper()
		res := scenarios.Run(context.Background(), base, lock, scenarios.Either, scenarios.Options{Seed: 3, Backend: simBackend(t)})
		if res.Checked == nil {
			t.Fatalf("%s: no history checked: %s", lock.Name, res.Summary())
		}
		return scenarios.LeaseNote(lock, res.Checked, res.TTL)
	}
	for _, name := range []string{lockimpl.NameNaive, lockimpl.NameToken, lockimpl.NameTokenWatchdog, lockimpl.NameRedlock,
		lockimpl.NameFenced, lockimpl.NameLongTTL, lockimpl.NameNoTTL} {
		spec, err := lockimpl.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if n := note(spec); n != "" {
			t.Errorf("%s: a note on a lock whose lease is what it declares: %s", name, n)
		}
	}
	secondLock := wholeSecondLock()
	n := note(secondLock)
	if !strings.Contains(n, "whole-second's leases lasted 1.000 s on the server") || !strings.Contains(n, "not 300 ms") ||
		!strings.Contains(n, "Scaled") {
		t.Errorf("a 1 s lease at a 300 ms TTL: note %q, want the lease seen, the TTL and the way out", n)
	}
	secondLock.Lease = 1000.0 / 300
	if n := note(secondLock); n != "" {
		t.Errorf("a declared 1 s lease: %s", n)
	}
}

// wholeSecondLock is the token lock with a lease it rounds up to whole
// seconds, as Dapr's ExpiryInSeconds does.
func wholeSecondLock() lockimpl.Spec {
	token, _ := lockimpl.Lookup(lockimpl.NameToken)
	return lockimpl.Spec{Name: "whole-second", Nodes: 1, New: func(env lockimpl.Env) (lockimpl.Locker, error) {
		env.TTL = (env.TTL + time.Second - 1).Truncate(time.Second) // 300 ms: 1 s
		return token.New(env)
	}}
}
