package process

import (
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/backend"
)

// ShiftClock implements backend.ClockNode: the node's wall clock moves by d on its
// next clock call (the offset is shared memory the shim reads).
func (n *Node) ShiftClock(d time.Duration) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.clock == nil {
		return fmt.Errorf("%w: node %s was not started with Clock", backend.ErrNoClockShim, n.cfg.Name)
	}
	n.clock.Shift(d)
	return nil
}

// ClockOffset implements backend.ClockNode.
func (n *Node) ClockOffset() time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.clock == nil {
		return 0
	}
	return n.clock.Offset()
}

var _ backend.ClockNode = (*Node)(nil)
