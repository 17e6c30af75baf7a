package faults

import "time"

// power-loss is node-restart where the node loses power instead of being
// killed: it comes back from its append-only file, less what its fsync
// policy had not made durable (NodeRestart with powerLoss).
func init() {
	mustRegister(Kind{Name: "power-loss",
		Doc: "node-restart where the node loses power instead: it comes back from its AOF, less what its fsync " +
			"policy (the scenario's fsync) had not made durable",
		Moment: "nodes lost power and came back while a lease they carried was live, a majority of them under one lease",
		Danger: restartedUnder(false, "from its AOF after a power loss"),
		Needs:  Needs{NodeControl: true, Persistence: true},
		Build:  func(s Spec, ttl time.Duration) Fault { return &NodeRestart{Delay: s.Delay, powerLoss: true} }})
}
