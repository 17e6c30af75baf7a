package scenarios

import (
	"context"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/witness"
)

// startWitness watches the part's nodes into its history (nil, which
// Stop accepts, when the plan turned the witness off).
func startWitness(ctx context.Context, p *Plan, dep *deployment.Deployment, rec *history.Recorder) *witness.Witness {
	if !p.Witness {
		return nil
	}
	return witness.Start(ctx, witness.Config{Nodes: dep.Nodes(), Keys: p.Keys, Prefix: p.KeyPrefix,
		NoDial: p.Simulated(), Sink: witnessSink(rec)})
}

// witnessSink records what a witness saw as witness events. Each is timed
// when it is written, not when the notification came (a write waits for
// the read of its value, one round trip on the admin connection, and what
// follows it waits with it): the history stays in call order, which its
// readers rely on, at the cost of that round trip (tens of µs on
// loopback). Deadlines are exact to the millisecond the server counts in.
func witnessSink(rec *history.Recorder) func(string, backend.KeyChange) {
	return func(key string, c backend.KeyChange) {
		a := history.ServerAct{Node: c.Node, Act: string(c.Op), Revision: c.Revision, Lease: c.Lease}
		if c.Key != "" && c.Key != key {
			a.ServerKey = c.Key
		}
		if !c.Deadline.IsZero() {
			a.Deadline = max(1, rec.Since(c.Deadline))
		}
		rec.Point(history.Event{Kind: history.Witness, Client: -1, Key: key, Token: c.Value, Err: c.Reason,
			Window: history.WitnessWindow(a)})
	}
}

func witnessWord(p *Plan) string {
	if p.Witness {
		return "on"
	}
	return "off"
}
