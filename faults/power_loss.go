package faults

import "time"

// power-loss is node-restart where the node loses power instead of being
// killed: it comes back from its append-only file, less what its fsync
// policy had not made durable (NodeRestart with powerLoss).
func init() {
	mustRegister(Kind{Name: "power-loss", Family: FamilyNodeRestart,
		Doc: "node-restart where the node loses power instead: it comes back from its AOF, less what its fsync " +
			"policy (the scenario's fsync) had not made durable",
		Moment: "nodes lost power and came back while a lease they carried was live, a majority of them under one lease",
		Danger: restartedUnder(false, "from its AOF after a power loss"),
		Needs:  Needs{NodeControl: true, Persistence: true},
		Params: PowerLossParams{}})
}

// PowerLossParams are power-loss's parameters.
type PowerLossParams struct {
	// Delay is how long the node stays without power. Default none: at once.
	Delay time.Duration `yaml:"delay,omitempty" json:"delay,omitempty"`
}

// Validate implements Params.
func (p PowerLossParams) Validate() error { return nonNegative("power-loss", p.Delay) }

// Scaled implements Params.
func (p PowerLossParams) Scaled(k float64) Params { p.Delay = scale(p.Delay, k); return p }

// Build implements Params.
func (p PowerLossParams) Build(time.Duration) Fault {
	return &NodeRestart{Delay: p.Delay, powerLoss: true}
}
