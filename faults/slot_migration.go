package faults

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/wait"
)

func init() {
	mustRegister(Kind{Name: "slot-migration", Family: FamilyResharding,
		Doc: "on Redis Cluster, right after a fresh lock acquisition (its critical section runs Duration, default " +
			"0.9x TTL), move the lock key's slot to the next shard as redis-cli --cluster reshard does: IMPORTING " +
			"on the target, MIGRATING on the source (absent keys answer ASK) for Stage (default TTL/4), MIGRATE " +
			"of its keys, the slot's new owner set on both primaries (MOVED from then on)",
		Moment: "the lock key moved to another shard while a pod believed it held it", Danger: movedUnderLease,
		Needs:  Needs{NodeControl: true, Cluster: true},
		Params: SlotMigrationParams{}})
}

// SlotMigrationParams are slot-migration's parameters.
type SlotMigrationParams struct {
	// Stage is how long the slot stays half-moved (MIGRATING and
	// IMPORTING) before its keys move. Default TTL/4.
	Stage time.Duration `yaml:"stage,omitempty" json:"stage,omitempty"`
	// Duration is the fresh holder's critical section. Default 0.9x TTL.
	Duration time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
}

// Validate implements Params.
func (p SlotMigrationParams) Validate() error {
	return nonNegative("slot-migration", p.Stage, p.Duration)
}

// Scaled implements Params.
func (p SlotMigrationParams) Scaled(k float64) Params {
	p.Stage, p.Duration = scale(p.Stage, k), scale(p.Duration, k)
	return p
}

// Build implements Params.
func (p SlotMigrationParams) Build(ttl time.Duration) Fault {
	return &SlotMigration{Stage: or(p.Stage, ttl/4), Hold: or(p.Duration, ttl*9/10)}
}

// SlotMigration resharding under a held lock: the slot's keys move with
// their remaining TTL (MIGRATE is DUMP, RESTORE and DEL in one), clients
// are sent on by ASK while it moves and MOVED after.
type SlotMigration struct {
	Stage, Hold time.Duration
}

// Name implements Fault.
func (*SlotMigration) Name() string { return "slot-migration" }

// Inject implements Fault.
func (f *SlotMigration) Inject(ctx context.Context, env *Env) error {
	c := env.Deployment
	from, _, err := keyShard(ctx, env)
	if err != nil {
		return err
	}
	slot := deployment.KeySlot(env.Keys[0])
	to, err := c.ShardPrimary(ctx, (from/2+1)%c.Shards())
	if err != nil {
		return err
	}
	// A fresh holder that works through the move: while the slot is
	// half-moved, a lock whose keys are partly there (fenced: its counter
	// without its key) gets TRYAGAIN, and one that cannot follow ASK
	// (token-wait) is refused, so few take the lock then.
	if _, _, ok := env.Pods.AwaitSlow(ctx, f.Hold); !ok {
		return nil
	}
	end := env.window(f.Name(), history.Hit{Nodes: []string{c.Node(from).Name(), c.Node(to).Name()}})
	defer end()
	return heal(func(hctx context.Context) error {
		if err := f.move(ctx, hctx, env, slot, from, to); err != nil {
			// A move cut short leaves the slot half-moved: both ends are
			// told it is stable again (its keys where they are).
			return errors.Join(err, c.StableSlot(hctx, to, slot), c.StableSlot(hctx, from, slot))
		}
		return c.WaitClusterSettled(hctx)
	})
}

// move is the resharding of slot from one primary to another, ctx the
// cell's (the stage ends early with it), hctx the steps'.
func (f *SlotMigration) move(ctx, hctx context.Context, env *Env, slot, from, to int) error {
	c := env.Deployment
	if err := c.SetSlot(hctx, to, slot, "IMPORTING", from); err != nil {
		return err
	}
	if err := c.SetSlot(hctx, from, slot, "MIGRATING", to); err != nil {
		return err
	}
	wait.Sleep(ctx, f.Stage) // absent keys answer ASK meanwhile
	// MIGRATE, then the new owner at once, and the key read where it
	// arrived.
	if _, err := c.MigrateKeys(hctx, slot, from, to); err != nil {
		return err
	}
	for _, i := range []int{to, from} {
		if err := c.SetSlot(hctx, i, slot, "NODE", to); err != nil {
			return err
		}
		if i == to {
			probeKeys(env, c.Node(to)) // before, a plain GET there answers MOVED
		}
	}
	return nil
}

// movedUnderLease is slot-migration's danger: the key was on its new
// shard (probed the moment the shard owned the slot) while a pod's lease on it
// was live.
func movedUnderLease(w history.Event, v *View) (int64, string, bool) {
	probe, ok := firstProbe(w, v)
	if !ok {
		return w.Call, "the slot's keys were not moved within the window", false
	}
	for _, h := range v.holdsAt(probe.Call) {
		// Held through the move: taken before the window opened, live
		// when the key was read on its new shard.
		if h.Key != probe.Key || h.Start > w.Call || v.dueOf(h, probe.Call).at <= probe.Call {
			continue
		}
		return probe.Call, fmt.Sprintf("%s moved to %s at %s while %s believed it held it (acquired at %s, %s): %s",
			h.Key, probe.Node(), secs(probe.Call), clientText(h.Client), secs(h.Start), v.dueText(h, probe.Call),
			keyFound(probe, h, v.tokens())), true
	}
	return w.Call, "no pod held the key when it moved", false
}
