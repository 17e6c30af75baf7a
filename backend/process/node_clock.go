package process

import (
	"time"

	"github.com/lockchaos/lockchaos/backend"
)

// ShiftClock implements backend.ClockNode: the node's wall clock moves by d on its
// next clock call (the offset is shared memory the shim reads).
func (n *Node) ShiftClock(d time.Duration) error {
	return backend.ShiftClock(&n.mu, &n.clock, n.cfg.Name, d)
}

// ClockOffset implements backend.ClockNode.
func (n *Node) ClockOffset() time.Duration { return backend.ClockOffset(&n.mu, &n.clock) }

var _ backend.ClockNode = (*Node)(nil)
