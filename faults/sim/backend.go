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
// What is not modelled, and skipped with the reason wherever it would be
// needed (Backend.Unsupported): replication and failover (miniredis has
// none), Sentinel, persistence and power loss (no AOF), and driver
// processes (they live in real time, outside the bubble).
package sim

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/lockchaos/lockchaos/faults"
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
	_ faults.Backend        = Backend{}
	_ faults.NetworkBackend = Backend{}
	_ faults.VirtualBackend = Backend{}
	_ faults.ClockBackend   = Backend{}
	_ faults.LimitedBackend = Backend{}
)

// New returns the backend; enter runs a function in a fresh bubble, e.g.
// from a test:
//
//	sim.New(func(f func()) { synctest.Test(t, func(*testing.T) { f() }) })
func New(enter func(f func())) Backend { return Backend{enter: enter} }

// Name implements faults.Backend.
func (Backend) Name() string { return Name }

// NodeControl implements faults.Backend: nodes can be killed, restarted
// and paused (not promoted: see Unsupported).
func (Backend) NodeControl() bool { return true }

// NodeOpTime implements faults.Backend: a simulated kill and restart takes
// no virtual time, so nothing is stretched for it.
func (Backend) NodeOpTime() time.Duration { return 0 }

// StartNode implements faults.Backend. The node config's persistence and
// clock fields need nothing here: persistence is refused by Unsupported,
// and every simulated node's clock can be moved.
func (Backend) StartNode(_ context.Context, cfg faults.NodeConfig) (faults.RedisNode, error) {
	name := cfg.Name
	if name == "" {
		name = "node"
	}
	return newNode(name), nil
}

// NewNetwork implements faults.NetworkBackend.
func (Backend) NewNetwork() (faults.Network, error) { return NewNetwork(), nil }

// Enter implements faults.VirtualBackend.
func (b Backend) Enter(f func()) { b.enter(f) }

// ClockControl implements faults.ClockBackend: forward clock jumps are
// modelled (Node.ShiftClock).
func (Backend) ClockControl() error { return nil }

// Unsupported implements faults.LimitedBackend: what the simulation
// cannot model, in words, or "".
func (Backend) Unsupported(n faults.Needs) string {
	switch {
	case n.Replica:
		return "skipped: the sim backend cannot model replication or failover (miniredis has no replication); run it on the process backend"
	case n.Persistence:
		return "skipped: the sim backend cannot model persistence or power loss (miniredis keeps no append-only file); run it on the process backend"
	}
	return ""
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
