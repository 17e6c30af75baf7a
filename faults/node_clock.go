package faults

import (
	"fmt"
	"time"
)

// ShiftClock implements ClockNode: the node's wall clock moves by d on its
// next clock call (the offset is shared memory the shim reads).
func (n *Node) ShiftClock(d time.Duration) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.clock == nil {
		return fmt.Errorf("%w: node %s was not started with Clock", ErrNoClockShim, n.cfg.Name)
	}
	n.clock.shift(d)
	return nil
}

// ClockOffset implements ClockNode.
func (n *Node) ClockOffset() time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.clock == nil {
		return 0
	}
	return n.clock.offset()
}

var _ ClockNode = (*Node)(nil)
