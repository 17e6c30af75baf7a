// Package sim is the simulated backend: Redis nodes are miniredis
// instances in memory, links are in-memory pipes with the embedded
// toxiproxy's fault vocabulary, and every part of a cell runs inside a
// testing/synctest bubble, in virtual time. Time moves only when every
// goroutine of the cell waits, so load on the machine cannot make a lease
// expire, and a cell of seconds runs in milliseconds.
//
// What a seed fixes here: the fault schedule and the virtual times of
// everything the schedule and the workload draw. What it does not fix:
// goroutines that become runnable at the same virtual instant run in an
// unspecified order, so two runs of one seed may interleave differently.
//
// Every node watches its own keys for a witness (Node.ObserveKeys,
// observe.go): what each command did to the keys, at its virtual instant.
//
// What is not modelled, and skipped with the reason wherever it would be
// needed (Backend.Supports): replication and failover (miniredis has
// none), Sentinel, persistence and power loss (no AOF), and driver
// processes (they live in real time, outside the bubble).
package sim

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/netfault"
)

// Name is the backend's name in flags, histories and reports.
const Name = "sim"

// Backend starts simulated nodes and networks. Enter must run f inside a
// synctest bubble (synctest.Test's function, or Host's) and return when f
// and everything f started have ended.
type Backend struct {
	enter func(f func())
}

var (
	_ backend.Backend        = Backend{}
	_ backend.NetworkBackend = Backend{}
	_ backend.VirtualBackend = Backend{}
)

// New returns the backend; enter runs a function in a fresh bubble, e.g.
// from a test:
//
//	sim.New(func(f func()) { synctest.Test(t, func(*testing.T) { f() }) })
func New(enter func(f func())) Backend { return Backend{enter: enter} }

// Name implements backend.Backend.
func (Backend) Name() string { return Name }

// NodeOpTime implements backend.Backend: a simulated kill and restart takes
// no virtual time, so nothing is stretched for it.
func (Backend) NodeOpTime() time.Duration { return 0 }

// StartNode implements backend.Backend. The node config's persistence and
// clock fields need nothing here: persistence is refused by Supports,
// and every simulated node's clock can be moved.
func (Backend) StartNode(_ context.Context, cfg backend.NodeConfig) (backend.RedisNode, error) {
	name := cfg.Name
	if name == "" {
		name = "node"
	}
	return newNode(name), nil
}

// NewNetwork implements backend.NetworkBackend.
func (Backend) NewNetwork() (netfault.Network, error) { return NewNetwork(), nil }

// Enter implements backend.VirtualBackend.
func (b Backend) Enter(f func()) { b.enter(f) }

// Supports implements backend.Backend: nodes can be killed, restarted
// and paused, and forward clock jumps are modelled (Node.ShiftClock); what
// the simulation cannot model is refused in words.
func (Backend) Supports(n backend.Needs) error {
	if err := backend.RedisOnly(Name, n, "a "+n.Service.Server()+" cannot run in virtual time (it is a real process "+
		"with its own clock); run it on the process backend"); err != nil {
		return err
	}
	switch {
	case n.Replica:
		return backend.Unsupported("the sim backend cannot model replication or failover (miniredis has no " +
			"replication); run it on the process backend")
	case n.Persistence:
		return backend.Unsupported("the sim backend cannot model persistence or power loss (miniredis keeps no " +
			"append-only file); run it on the process backend")
	case n.RealTime:
		return backend.Unsupported("a lock in a process of its own runs in real time, which the sim backend's " +
			"virtual time cannot reach; run it on the process backend")
	case n.Sentinel:
		return backend.Unsupported("this scenario runs real Sentinels beside the nodes, which the sim backend " +
			"cannot do (the process backend can)")
	case n.Cluster:
		return backend.Unsupported("the sim backend cannot model Redis Cluster: miniredis has no cluster mode (no " +
			"slots, no redirects, no failure detection or election); run it on the process backend")
	}
	return nil
}

// ServerVersion names what plays Redis here, for summaries: miniredis and
// the version this binary was built with, marked as simulated.
func ServerVersion() string {
	v := "(unknown version)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/alicebob/miniredis/v2" {
				v = d.Version
			}
		}
	}
	return "miniredis " + v + " (simulated, not Redis)"
}
