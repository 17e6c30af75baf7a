package faults

import "time"

// node-restart-delayed is node-restart with the restart delayed past the
// TTL: the remedy the Redlock description gives for a node that forgets.
func init() {
	mustRegister(Kind{Name: "node-restart-delayed", Doc: "node-restart with the restart delayed past the TTL",
		Moment: "a node carrying a live lease stayed down past the TTL", Danger: restartedUnder(true, "empty"),
		Needs: Needs{NodeControl: true},
		Build: func(s Spec, ttl time.Duration) Fault {
			return &NodeRestart{Delay: or(s.Delay, ttl+ttl/2), delayed: true}
		}})
}
