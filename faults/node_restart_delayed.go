package faults

import "time"

// node-restart-delayed is node-restart with the restart delayed past the
// TTL: the remedy the Redlock description gives for a node that forgets.
func init() {
	mustRegister(Kind{Name: "node-restart-delayed", Family: FamilyNodeRestart, Doc: "node-restart with the restart delayed past the TTL",
		Moment: "a node carrying a live lease stayed down past the TTL", Danger: restartedUnder(true, "empty"),
		Needs:  Needs{NodeControl: true},
		Params: NodeRestartDelayedParams{}})
}

// NodeRestartDelayedParams are node-restart-delayed's parameters.
type NodeRestartDelayedParams struct {
	// Delay is how long the killed node stays down. Default 1.5x TTL.
	Delay time.Duration `yaml:"delay,omitempty" json:"delay,omitempty"`
}

// Validate implements Params.
func (p NodeRestartDelayedParams) Validate() error {
	return nonNegative("node-restart-delayed", p.Delay)
}

// Scaled implements Params.
func (p NodeRestartDelayedParams) Scaled(k float64) Params { p.Delay = scale(p.Delay, k); return p }

// Build implements Params.
func (p NodeRestartDelayedParams) Build(ttl time.Duration) Fault {
	return &NodeRestart{Delay: or(p.Delay, ttl+ttl/2), delayed: true}
}
