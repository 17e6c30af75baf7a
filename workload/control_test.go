package workload_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/deployment"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/backend/sim/simtest"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/workload"
)

// TestPausedPodFreezesItsConnections: every connection a pod dialed with
// Control.Dial stops while the pod is paused, whoever made the client,
// and goes on after Resume; other pods are not held up.
func TestPausedPodFreezesItsConnections(t *testing.T) {
	c := backendtest.Cluster(t, deployment.Config{Clients: 2})
	ctl := workload.NewControl(2)
	defer ctl.Close()
	client := func(pod int) *redis.Client {
		rdb := redis.NewClient(&redis.Options{Addr: c.ClientAddrs(pod)[0], Dialer: ctl.Dial(pod), Protocol: 2, DisableIdentity: true, MaxRetries: -1})
		t.Cleanup(func() { _ = rdb.Close() })
		if err := rdb.Ping(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		return rdb
	}
	paused, other := client(0), client(1)
	ctl.Pause(0)
	done := make(chan error, 1)
	go func() { done <- paused.Ping(context.Background()).Err() }()
	if err := other.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("the other pod is held up: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("a paused pod's command completed (%v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	ctl.Resume(0)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after resume: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the command did not go on after resume")
	}
}

// TestAwaitAcquireHoldingStretchesThatAcquisitionsSection: the acquisition
// AwaitAcquireHolding reports is the one whose critical section runs for
// the asked work, however soon it starts; no other section is stretched,
// and a request given up on is withdrawn. (In virtual time: which section
// the workload stretches is the workload's, whatever serves the lock.)
func TestAwaitAcquireHoldingStretchesThatAcquisitionsSection(t *testing.T) {
	simtest.Run(t, awaitAcquireHolding)
}

func awaitAcquireHolding(t *testing.T, b sim.Backend) {
	const clients, work = 4, 80 * time.Millisecond
	c := backendtest.Cluster(t, deployment.Config{Clients: clients, Backend: b})
	ctl := workload.NewControl(clients)
	defer ctl.Close()
	rec, err := history.NewRecorder("", history.Header{Scenario: "test", Lock: lockimpl.NameToken, Clients: clients})
	if err != nil {
		t.Fatal(err)
	}
	type asked struct {
		pod int
		at  int64
	}
	got := make(chan asked, 1)
	go func() {
		time.Sleep(100 * time.Millisecond)
		gone, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := ctl.AwaitAcquireHolding(gone, time.Hour); err == nil {
			t.Error("a request whose context had ended was granted")
		}
		at := rec.Since(time.Now())
		pod, err := ctl.AwaitAcquireHolding(context.Background(), work)
		if err != nil {
			t.Error(err)
		}
		got <- asked{pod, at}
	}()
	if _, err := workload.Run(context.Background(), workload.Config{Clients: clients, Duration: 600 * time.Millisecond},
		redisFactory(t, c, lockimpl.NameToken, time.Second), rec, ctl.Hooks()); err != nil {
		t.Fatal(err)
	}
	h, err := rec.Close()
	if err != nil {
		t.Fatal(err)
	}
	a := <-got
	stretched := 0
	for i, e := range h.Events {
		if e.Kind != history.Acquire || e.Outcome != history.Ok {
			continue
		}
		for _, w := range h.Events[i+1:] {
			if w.Client != e.Client || w.Kind != history.Write {
				continue
			}
			held := time.Duration(w.Call - e.Return)
			switch {
			case held >= work:
				stretched++
				if e.Client != a.pod || e.Return < a.at {
					t.Errorf("client %d's section from %v held %v; the request (at %v) reported client %d", e.Client, time.Duration(e.Return), held, time.Duration(a.at), a.pod)
				}
			case e.Client == a.pod && e.Return >= a.at && stretched == 0:
				t.Errorf("client %d, the acquisition reported, held only %v, want %v", e.Client, held, work)
			}
			break
		}
	}
	if stretched != 1 {
		t.Fatalf("%d sections stretched, want exactly 1", stretched)
	}
}
