package lockimpl_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/netfault"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/backend/sim/simtest"
	"github.com/lockchaos/lockchaos/lockimpl"
)

var ctx = context.Background()

func mustAcquire(t *testing.T, l lockimpl.Locker, key string) lockimpl.Lease {
	t.Helper()
	lease, err := l.Acquire(ctx, key)
	if err != nil {
		t.Fatalf("acquire %s: %v", key, err)
	}
	return lease
}

func wantNotAcquired(t *testing.T, l lockimpl.Locker, key string) {
	t.Helper()
	lease, err := l.Acquire(ctx, key)
	if !errors.Is(err, lockimpl.ErrNotAcquired) {
		t.Fatalf("acquire %s while held: lease %v, err %v; want ErrNotAcquired", key, lease, err)
	}
	if !lockimpl.IsDefinite(err) {
		t.Fatalf("ErrNotAcquired must be definite: %v", err)
	}
}

func TestExclusiveWhileHeld(t *testing.T) {
	for _, name := range redisLocks {
		t.Run(name, func(t *testing.T) {
			_, ls := pods(t, name, 2, lockOptions{TTL: 5 * time.Second})
			a := mustAcquire(t, ls[0], "order:1")
			wantNotAcquired(t, ls[1], "order:1")
			wantNotAcquired(t, ls[0], "order:1") // not reentrant either
			if err := a.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestFreeAfterRelease(t *testing.T) {
	for _, name := range append([]string{lockimpl.NameMutex}, redisLocks...) {
		t.Run(name, func(t *testing.T) {
			_, ls := pods(t, name, 2, lockOptions{TTL: 5 * time.Second})
			second := ls[1]
			if name == lockimpl.NameMutex {
				second = ls[0] // a mutex only excludes within its own pod
			}
			a := mustAcquire(t, ls[0], "order:1")
			if err := a.Release(ctx); err != nil {
				t.Fatalf("release: %v", err)
			}
			b := mustAcquire(t, second, "order:1")
			if err := b.Release(ctx); err != nil {
				t.Fatalf("release: %v", err)
			}
		})
	}
}

func TestSecondReleaseIsNotHeld(t *testing.T) {
	for _, name := range append([]string{lockimpl.NameMutex}, redisLocks...) {
		t.Run(name, func(t *testing.T) {
			_, ls := pods(t, name, 1, lockOptions{TTL: 5 * time.Second})
			a := mustAcquire(t, ls[0], "order:1")
			if err := a.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if err := a.Release(ctx); !errors.Is(err, lockimpl.ErrNotHeld) {
				t.Fatalf("second release = %v, want ErrNotHeld", err)
			}
		})
	}
}

func TestFreeAfterTTL(t *testing.T) {
	// token-watchdog is left out on purpose: renewing past the TTL is its job.
	for _, name := range []string{lockimpl.NameNaive, lockimpl.NameToken, lockimpl.NameRedlock, lockimpl.NameFenced} {
		t.Run(name, func(t *testing.T) {
			simtest.Run(t, func(t *testing.T, be sim.Backend) {
				_, ls := podsOn(t, be, name, 2, lockOptions{})
				mustAcquire(t, ls[0], "order:1") // never released
				wantNotAcquired(t, ls[1], "order:1")
				time.Sleep(testTTL + 50*time.Millisecond)
				mustAcquire(t, ls[1], "order:1")
			})
		})
	}
}

// TestLeaseTimeLocksSetTheirLeases: no-ttl's key never expires and
// long-ttl's lives ten times the TTL, on the server itself.
func TestLeaseTimeLocksSetTheirLeases(t *testing.T) {
	for name, want := range map[string]func(pttl int64) bool{
		lockimpl.NameNoTTL:   func(pttl int64) bool { return pttl == -1 },
		lockimpl.NameLongTTL: func(pttl int64) bool { return pttl > 9*testTTL.Milliseconds() && pttl <= 10*testTTL.Milliseconds() },
	} {
		t.Run(name, func(t *testing.T) {
			simtest.Run(t, func(t *testing.T, be sim.Backend) {
				c, ls := podsOn(t, be, name, 2, lockOptions{})
				mustAcquire(t, ls[0], "order:1")
				v, err := c.Node(0).Do(ctx, "PTTL", "order:1")
				if err != nil {
					t.Fatal(err)
				}
				if pttl, _ := v.(int64); !want(pttl) {
					t.Fatalf("PTTL %v with a %v TTL", v, testTTL)
				}
				time.Sleep(testTTL + 50*time.Millisecond)
				wantNotAcquired(t, ls[1], "order:1") // the cell's TTL has passed, the lease has not
			})
		})
	}
}

func TestReleaseRefusesForeignToken(t *testing.T) {
	for _, name := range []string{lockimpl.NameToken, lockimpl.NameTokenWatchdog, lockimpl.NameRedlock, lockimpl.NameFenced} {
		t.Run(name, func(t *testing.T) {
			simtest.Run(t, func(t *testing.T, be sim.Backend) {
				c, ls := podsOn(t, be, name, 3, lockOptions{})
				a := mustAcquire(t, ls[0], "order:1")
				if name == lockimpl.NameTokenWatchdog {
					// Starve A's watchdog so its lease lapses, as in a partition.
					for _, l := range c.ClientLinks(0) {
						if err := l.Blackhole(netfault.Both); err != nil {
							t.Fatal(err)
						}
					}
				}
				time.Sleep(testTTL + 50*time.Millisecond)
				b := mustAcquire(t, ls[1], "order:1")
				if err := c.HealAll(); err != nil {
					t.Fatal(err)
				}
				var err error
				backendtest.Eventually(t, 3*time.Second, "A's release gets a definite answer", func() bool {
					err = a.Release(ctx)
					return lockimpl.IsDefinite(err)
				})
				if !errors.Is(err, lockimpl.ErrNotHeld) {
					t.Fatalf("A's release of B's lock = %v, want ErrNotHeld", err)
				}
				wantNotAcquired(t, ls[2], "order:1") // B still holds it
				if err := b.Release(ctx); err != nil {
					t.Fatalf("B's release: %v", err)
				}
			})
		})
	}
}

// TestNaiveReleaseDeletesForeignLock shows the seed's bug: a holder that ran
// past the TTL deletes the next holder's lock, and a third client walks in
// while the second still believes it holds the lock.
func TestNaiveReleaseDeletesForeignLock(t *testing.T) {
	simtest.Run(t, func(t *testing.T, be sim.Backend) {
		_, ls := podsOn(t, be, lockimpl.NameNaive, 3, lockOptions{})
		a := mustAcquire(t, ls[0], "order:1")
		time.Sleep(testTTL + 50*time.Millisecond)
		b := mustAcquire(t, ls[1], "order:1")
		if err := a.Release(ctx); err != nil {
			t.Fatalf("A's release = %v; the naive lock reports success while deleting B's lock", err)
		}
		c := mustAcquire(t, ls[2], "order:1") // B and C now both "hold" order:1
		if err := b.Release(ctx); err != nil {
			t.Fatalf("B's release deleted C's lock and says %v", err)
		}
		if err := c.Release(ctx); !errors.Is(err, lockimpl.ErrNotHeld) {
			t.Fatalf("C's lock should already be gone (deleted by B): %v", err)
		}
	})
}

func TestMutexDoesNotCrossPods(t *testing.T) {
	_, ls := pods(t, lockimpl.NameMutex, 2, lockOptions{})
	mustAcquire(t, ls[0], "order:1")
	wantNotAcquired(t, ls[0], "order:1") // within one pod it excludes
	mustAcquire(t, ls[1], "order:1")     // across pods it does not
}

func TestIndefiniteErrorWhenRedisDoesNotAnswer(t *testing.T) {
	for _, name := range redisLocks {
		t.Run(name, func(t *testing.T) {
			c, ls := pods(t, name, 1, lockOptions{})
			for _, l := range c.ClientLinks(0) {
				if err := l.Blackhole(netfault.Both); err != nil {
					t.Fatal(err)
				}
			}
			lease, err := ls[0].Acquire(ctx, "order:1")
			if err == nil || lockimpl.IsDefinite(err) {
				t.Fatalf("acquire through a blackhole: lease %v err %v; want an indefinite error", lease, err)
			}
		})
	}
}

func TestWatchdogKeepsSlowHolderAlive(t *testing.T) {
	simtest.Run(t, func(t *testing.T, be sim.Backend) {
		var mu sync.Mutex
		renewed := 0
		onRenew := func(r lockimpl.Renewal) {
			mu.Lock()
			defer mu.Unlock()
			if r.Renewed {
				renewed++
			}
		}
		before := lockimpl.ActiveWatchdogs()
		_, ls := podsOn(t, be, lockimpl.NameTokenWatchdog, 2, lockOptions{WatchdogInterval: 100 * time.Millisecond, OnRenew: onRenew})
		a := mustAcquire(t, ls[0], "order:1")
		if got := lockimpl.ActiveWatchdogs(); got != before+1 {
			t.Fatalf("%d watchdogs running, want %d", got, before+1)
		}
		time.Sleep(3 * testTTL) // a slow holder: three TTLs of work
		wantNotAcquired(t, ls[1], "order:1")
		if err := a.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if got := lockimpl.ActiveWatchdogs(); got != before {
			t.Fatalf("%d watchdogs running after release, want %d", got, before)
		}
		mu.Lock()
		n := renewed
		mu.Unlock()
		if n < 5 {
			t.Fatalf("%d successful renewals over 900ms at a 100ms interval", n)
		}
		// No renewal may land after release: the goroutine is gone.
		time.Sleep(250 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		if renewed != n {
			t.Fatalf("renewals after release: %d -> %d", n, renewed)
		}
		b := mustAcquire(t, ls[1], "order:1")
		if err := b.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// TestWatchdogCloseStopsForgottenLeases: a lease nobody releases renews
// forever, unless its locker is closed (a pod shutting down).
func TestWatchdogCloseStopsForgottenLeases(t *testing.T) {
	before := lockimpl.ActiveWatchdogs()
	_, ls := pods(t, lockimpl.NameTokenWatchdog, 1, lockOptions{})
	mustAcquire(t, ls[0], "order:1")
	mustAcquire(t, ls[0], "order:2")
	if got := lockimpl.ActiveWatchdogs(); got != before+2 {
		t.Fatalf("%d watchdogs, want %d", got, before+2)
	}
	if err := ls[0].(interface{ Close() error }).Close(); err != nil {
		t.Fatal(err)
	}
	if got := lockimpl.ActiveWatchdogs(); got != before {
		t.Fatalf("%d watchdogs after Close, want %d", got, before)
	}
}

// TestWatchdogHolderIsNotToldWhenRenewalsFail shows the seed's weakness: a
// partitioned holder's lease lapses and another client takes the lock,
// while the holder's lease gives no sign (Lost is nil).
func TestWatchdogHolderIsNotToldWhenRenewalsFail(t *testing.T) {
	simtest.Run(t, func(t *testing.T, be sim.Backend) {
		c, ls := podsOn(t, be, lockimpl.NameTokenWatchdog, 2, lockOptions{WatchdogInterval: 100 * time.Millisecond})
		a := mustAcquire(t, ls[0], "order:1")
		if a.Lost() != nil {
			t.Fatal("the seed's watchdog never tells the holder; Lost must be nil")
		}
		for _, l := range c.ClientLinks(0) {
			if err := l.Blackhole(netfault.Both); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(testTTL + 100*time.Millisecond)
		b := mustAcquire(t, ls[1], "order:1")
		if err := c.HealAll(); err != nil {
			t.Fatal(err)
		}
		_ = a.Release(ctx) // stops the watchdog; the outcome is not the point here
		_ = b.Release(ctx)
	})
}

func TestRedlockSurvivesOneKilledNodeNotTwo(t *testing.T) {
	c, ls := pods(t, lockimpl.NameRedlock, 2, lockOptions{TTL: 2 * time.Second})
	if err := c.Node(0).Kill(); err != nil {
		t.Fatal(err)
	}
	a := mustAcquire(t, ls[0], "order:1")
	wantNotAcquired(t, ls[1], "order:1")
	if err := a.Release(ctx); err != nil {
		t.Fatalf("release with one node down: %v", err)
	}
	if err := c.Node(1).Kill(); err != nil {
		t.Fatal(err)
	}
	lease, err := ls[0].Acquire(ctx, "order:2")
	if err == nil {
		t.Fatalf("acquired %v with two of three nodes down", lease)
	}
	if lockimpl.IsDefinite(err) {
		t.Fatalf("node errors must be indefinite, got %v", err)
	}
}

func TestFencesStrictlyIncreaseAcrossHolders(t *testing.T) {
	_, ls := pods(t, lockimpl.NameFenced, 3, lockOptions{TTL: 5 * time.Second})
	var last uint64
	for i := range 30 {
		l := ls[i%3]
		lease := mustAcquire(t, l, "order:1")
		if lease.Fence() <= last {
			t.Fatalf("holder %d got fence %d after %d", i, lease.Fence(), last)
		}
		last = lease.Fence()
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// A key's counter is its own: another key starts from 1.
	other := mustAcquire(t, ls[0], "order:2")
	if other.Fence() != 1 {
		t.Fatalf("first fence on a fresh key = %d, want 1", other.Fence())
	}
}

func TestTokensAreUniqueAndLong(t *testing.T) {
	_, ls := pods(t, lockimpl.NameToken, 1, lockOptions{TTL: 5 * time.Second})
	seen := map[string]bool{}
	for range 20 {
		lease := mustAcquire(t, ls[0], "order:1")
		if len(lease.Token()) != 32 || seen[lease.Token()] {
			t.Fatalf("token %q: want 32 hex chars, never repeated", lease.Token())
		}
		seen[lease.Token()] = true
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func TestUnknownLockListsValidNames(t *testing.T) {
	_, err := lockimpl.Lookup("spinlock")
	if !errors.Is(err, lockimpl.ErrUnknownLock) {
		t.Fatalf("err = %v, want ErrUnknownLock", err)
	}
	for _, n := range lockimpl.Names() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not list %q", err, n)
		}
	}
	token, _ := lockimpl.Lookup(lockimpl.NameToken)
	if _, err := token.Build(lockimpl.Env{}); !errors.Is(err, lockimpl.ErrInvalidConfig) {
		t.Fatalf("token without a client: %v, want ErrInvalidConfig", err)
	}
}

func TestConfigsRejectBadValues(t *testing.T) {
	bad := map[string]interface{ Validate() error }{
		"naive ttl":            lockimpl.NaiveConfig{TTL: time.Microsecond},
		"token ttl":            lockimpl.TokenConfig{TTL: -time.Second},
		"watchdog interval":    lockimpl.WatchdogConfig{TTL: time.Second, Interval: time.Second},
		"watchdog negative":    lockimpl.WatchdogConfig{Interval: -time.Second},
		"redlock drift":        lockimpl.RedlockConfig{DriftFactor: 1.5},
		"fenced ttl":           lockimpl.FencedConfig{TTL: time.Nanosecond},
		"client negative pool": lockimpl.ClientConfig{PoolSize: -1},
	}
	for what, cfg := range bad {
		if err := cfg.Validate(); !errors.Is(err, lockimpl.ErrInvalidConfig) {
			t.Errorf("%s: Validate = %v, want ErrInvalidConfig", what, err)
		}
	}
	good := []interface{ Validate() error }{lockimpl.NaiveConfig{}, lockimpl.TokenConfig{}, lockimpl.WatchdogConfig{}, lockimpl.RedlockConfig{}, lockimpl.FencedConfig{}, lockimpl.MutexConfig{}, lockimpl.ClientConfig{}}
	for _, cfg := range good {
		if err := cfg.Validate(); err != nil {
			t.Errorf("zero %T: %v", cfg, err)
		}
	}
}

func TestRegistryRejectsDuplicatesAndBadSpecs(t *testing.T) {
	token, err := lockimpl.Lookup(lockimpl.NameToken)
	if err != nil {
		t.Fatal(err)
	}
	if err := lockimpl.Register(token); !errors.Is(err, lockimpl.ErrInvalidConfig) {
		t.Fatalf("registering %q twice: %v", token.Name, err)
	}
	for _, bad := range []lockimpl.Spec{
		{Name: "", New: token.New},
		{Name: "has space", New: token.New},
		// A name becomes a folder: nothing that climbs out of --out.
		{Name: "..", New: token.New},
		{Name: ".", New: token.New},
		{Name: "../../../ESCAPED", New: token.New},
		{Name: "x;touch${IFS}PWNED;#", New: token.New},
		{Name: "no-constructor"},
		{Name: "too-many", Nodes: 99, New: token.New},
	} {
		err := lockimpl.Register(bad)
		if !errors.Is(err, lockimpl.ErrInvalidConfig) {
			t.Errorf("Register(%+v) = %v, want ErrInvalidConfig", bad.Name, err)
		}
		if bad.New != nil && bad.Nodes == 0 && (err == nil || !strings.Contains(err.Error(), `letters, digits, ".", "_" and "-"`)) {
			t.Errorf("Register(%q): %v does not say which names are allowed", bad.Name, err)
		}
	}
	// Every built-in declares the traits the harness reads.
	for name, want := range map[string]string{
		lockimpl.NameMutex: "in-process", lockimpl.NameRedlock: "3 independent nodes",
		lockimpl.NameFenced: "1 node, fencing", lockimpl.NameTokenWatchdog: "1 node, renews",
	} {
		s, _ := lockimpl.Lookup(name)
		if got := s.Describe(); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}
