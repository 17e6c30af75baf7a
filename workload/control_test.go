package workload_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/faults/faultstest"
	"github.com/lockchaos/lockchaos/workload"
)

// TestPausedPodFreezesItsConnections: every connection a pod dialed with
// Control.Dial stops while the pod is paused, whoever made the client,
// and goes on after Resume; other pods are not held up.
func TestPausedPodFreezesItsConnections(t *testing.T) {
	c := faultstest.Cluster(t, faults.ClusterConfig{Clients: 2})
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
