package scenarios

import (
	"strconv"
	"time"
)

// DefaultBudget is the checker's budget per property when none is given:
// the checker's own default, and `lockchaos run --budget`'s.
const DefaultBudget = 30 * time.Second

// RunFlags are o's settings that change what a cell does, as the flags
// of `lockchaos run` that give them (each named as FieldError names it):
// a cell's rerun line carries them, so a pasted line runs the cell as it
// ran. A zero setting is the default, and carried by no flag.
func (o Options) RunFlags() []string {
	var f []string
	add := func(flag, value string) { f = append(f, "--"+flag, value) }
	if o.Duration > 0 {
		add("duration", o.Duration.String())
	}
	if o.Clients > 0 {
		add("clients", strconv.Itoa(o.Clients))
	}
	if o.Budget > 0 && o.Budget != DefaultBudget {
		add("budget", o.Budget.String())
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"max-duration", o.MaxDuration}, {"part-length", o.PartLength}, {"recover-within", o.RecoverWithin},
		{"node-timeout", o.NodeTimeout}} {
		if d.v > 0 {
			add(d.flag, d.v.String())
		}
	}
	if o.InParts {
		f = append(f, "--in-parts")
	}
	if o.NoWitness {
		f = append(f, "--no-witness")
	}
	if v := o.Floor.MinExercised; v != nil {
		add("min-exercised", strconv.Itoa(*v))
	}
	if v := o.Floor.MinCycles; v != nil {
		add("min-cycles", strconv.Itoa(*v))
	}
	if v := o.Floor.MaxIndefinite; v != nil {
		add("max-indefinite", strconv.FormatFloat(*v, 'g', -1, 64))
	}
	return f
}
