package workload_test

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/backend/sim/simtest"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/workload"
)

// dialFactory builds name's lock per pod over clients dialed through the
// control, whose connections a crash closes, as the harness's pods do.
func dialFactory(t *testing.T, c *deployment.Deployment, ctl *workload.Control, rec *history.Recorder, name string, ttl time.Duration) workload.Factory {
	return func(pod int) (lockimpl.Locker, error) {
		var nodes []redis.UniversalClient
		for _, addr := range c.ClientAddrs(pod) {
			rdb, err := lockimpl.NewRedisClient(addr, lockimpl.ClientConfig{Dialer: ctl.Dial(pod)})
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { _ = rdb.Close() })
			nodes = append(nodes, rdb)
		}
		spec, err := lockimpl.Lookup(name)
		if err != nil {
			return nil, err
		}
		l, err := spec.Build(lockimpl.Env{Pod: pod, Clients: nodes, Addrs: c.ClientAddrs(pod), TTL: ttl,
			OnRenew: workload.RenewalRecorder(rec, pod)})
		if closer, ok := l.(io.Closer); ok {
			t.Cleanup(func() { _ = closer.Close() }) // a watchdog's goroutines, as the harness's pods close them
		}
		return l, err
	}
}

// runWith runs the workload for d while act plays its part, and returns
// the closed history. It runs in virtual time on the simulated backend:
// what a crashed or hung pod does is the workload's, whatever serves the
// lock, and act's waits then take no wall time.
func runWith(t *testing.T, lock string, clients int, d time.Duration, act func(ctl *workload.Control, rec *history.Recorder)) (h *history.History) {
	t.Helper()
	simtest.Run(t, func(t *testing.T, b sim.Backend) {
		c := backendtest.Cluster(t, deployment.Config{Clients: clients, Backend: b})
		ctl := workload.NewControl(clients)
		defer ctl.Close()
		ctl.UseDialer(c.Dialer())
		rec, err := history.NewRecorder("", history.Header{Scenario: "lives", Lock: lock, Clients: clients})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { defer close(done); act(ctl, rec) }()
		if _, err := workload.Run(context.Background(), workload.Config{Clients: clients, Duration: d},
			dialFactory(t, c, ctl, rec, lock, 200*time.Millisecond), rec, ctl.Hooks()); err != nil {
			t.Fatal(err)
		}
		<-done
		if h, err = rec.Close(); err != nil {
			t.Fatal(err)
		}
	})
	if h == nil {
		t.FailNow() // the bubble failed and said why
	}
	return h
}

// TestCrashedPodStopsAndRestartsFresh: a crash while holding records one
// Abandon of the key it held, after which the pod records nothing (its
// worker stopped, its dials are refused) until Restart, when a fresh
// incarnation goes on acquiring.
func TestCrashedPodStopsAndRestartsFresh(t *testing.T) {
	var pod int
	var key string
	var dialErr error
	var restartedAt int64
	h := runWith(t, lockimpl.NameToken, 4, 1500*time.Millisecond, func(ctl *workload.Control, rec *history.Recorder) {
		ctx, rng := context.Background(), rand.New(rand.NewPCG(1, 2))
		time.Sleep(200 * time.Millisecond)
		var err error
		for key == "" { // the holder picked may release before the crash lands; try the next
			if pod, _, err = ctl.Holder(ctx, rng); err != nil {
				t.Error(err)
				return
			}
			if key, err = ctl.Crash(ctx, pod); err != nil {
				t.Error(err)
				return
			}
			if key == "" {
				ctl.Restart(pod)
			}
		}
		_, dialErr = ctl.Dial(pod)(ctx, "tcp", "127.0.0.1:1")
		if n := ctl.Alive(); n != 3 {
			t.Errorf("%d pods alive after a crash, want 3", n)
		}
		time.Sleep(400 * time.Millisecond)
		restartedAt = rec.Since(time.Now())
		ctl.Restart(pod)
	})
	if !errors.Is(dialErr, workload.ErrPodDead) {
		t.Errorf("a dead pod's dial: %v, want ErrPodDead", dialErr)
	}
	var abandonAt int64 = -1
	afterRestart := 0
	for _, e := range history.ByCall(h) {
		switch {
		case e.Kind == history.Abandon:
			if e.Client != pod || e.Key != key || e.Err != history.Crashed {
				t.Errorf("abandon %+v, want client %d key %s crashed", e, pod, key)
			}
			abandonAt = e.Call
		case e.Client == pod && abandonAt >= 0 && e.Call > abandonAt && e.Call < restartedAt:
			t.Errorf("the dead pod recorded %s at %v, after its crash at %v", e.Kind, e.Call, abandonAt)
		case e.Client == pod && e.Kind == history.Acquire && e.Outcome == history.Ok && e.Call >= restartedAt:
			afterRestart++
		}
	}
	if abandonAt < 0 {
		t.Fatal("no abandon event")
	}
	if afterRestart == 0 {
		t.Error("the restarted pod never acquired")
	}
	holds := history.Holds(h)
	for _, hd := range holds {
		if hd.Client == pod && hd.Start < abandonAt && hd.End > abandonAt {
			t.Errorf("the crashed pod's hold runs past its crash: %+v", hd)
		}
	}
}

// TestAbandonedLeaseIsRenewedForever: a hung holder of the watchdog lock
// never releases while its process goes on renewing, so nobody else ever
// acquires the key again (the watchdog trap); the hung pod records
// nothing after its abandon but renewals.
func TestAbandonedLeaseIsRenewedForever(t *testing.T) {
	var key string
	var pod int
	h := runWith(t, lockimpl.NameTokenWatchdog, 3, 1200*time.Millisecond, func(ctl *workload.Control, _ *history.Recorder) {
		ctx, rng := context.Background(), rand.New(rand.NewPCG(1, 2))
		time.Sleep(150 * time.Millisecond)
		var err error
		if pod, _, err = ctl.Holder(ctx, rng); err != nil {
			t.Error(err)
			return
		}
		if key, err = ctl.Abandon(ctx, pod); err != nil || key == "" {
			t.Errorf("abandon: key %q, %v", key, err)
		}
	})
	var at int64 = -1
	renewals, othersAfter := 0, 0
	for _, e := range history.ByCall(h) {
		switch {
		case e.Kind == history.Abandon:
			at = e.Call
			if e.Err != history.Abandoned || e.Client != pod {
				t.Errorf("abandon %+v, want client %d abandoned", e, pod)
			}
		case at < 0:
		case e.Client == pod && e.Kind == history.Renew && e.Outcome == history.Ok:
			renewals++
		case e.Client == pod:
			t.Errorf("the hung pod recorded %s after abandoning", e.Kind)
		case e.Kind == history.Acquire && e.Outcome == history.Ok && e.Key == key:
			othersAfter++
		}
	}
	if at < 0 {
		t.Fatal("no abandon event")
	}
	if renewals < 3 {
		t.Errorf("%d renewals after the abandon: the hung pod's watchdog must go on", renewals)
	}
	if othersAfter != 0 {
		t.Errorf("%d acquires of %s after it was abandoned to a live watchdog", othersAfter, key)
	}
}
