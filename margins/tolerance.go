package margins

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// Tolerance is the other liveness margin, of a lock on several nodes at
// one TTL: while one node of a minority is silently gone
// (minority-partition), how long a pod that tries for a free key waits.
// Every attempt waits out the silent node's call timeout before it counts
// its majority, so that timeout (the lock's setting: a share of the TTL
// for Redlock, else the client's) sets the wait, and once it eats the
// lease's validity no attempt succeeds at all: DESIGN §1's fault
// tolerance as a function of both.
type Tolerance struct {
	Lock string        `json:"lock"`
	TTL  time.Duration `json:"ttl_ns"`
	// NodeTimeout is how long an attempt waits for the silent node: the
	// lock's own bound (lockimpl.Spec.NodeTimeout) or the client's call
	// timeout, whichever is shorter.
	NodeTimeout time.Duration `json:"node_timeout_ns"`
	// Windows is how many minority faults were judged over the batch.
	Windows int `json:"windows"`
	// FreeShare is the share of the faults' time a key was free while a
	// pod tried for it; Longest the longest such wait, Median the median
	// (waits of a tenth of the liveness bound or more: the checker's
	// stretches); Stuck the waits past the bound (a liveness failure).
	FreeShare float64       `json:"free_share"`
	Median    time.Duration `json:"median_wait_ns,omitempty"`
	Longest   time.Duration `json:"longest_wait_ns,omitempty"`
	Waits     int           `json:"waits"`
	Stuck     int           `json:"stuck"`
	// Live is the design's answer: an attempt can succeed once the silent
	// node's timeout is inside the lease's validity, else none does. A
	// live wait is at least one node timeout (every attempt waits it
	// out) and often several: with one node silent an attempt needs every
	// node left, and two pods trying at once split them, fail together
	// and try again, each round another node timeout.
	Live   bool `json:"predicted_live"`
	Agrees bool `json:"agrees"`
}

// Redlock's validity: redsync keeps a lease only while the time its
// acquire took is under the TTL less a drift of 1% and 2 ms.
const (
	driftFactor = 0.01
	driftFloor  = 2 * time.Millisecond
)

// Tolerances measures each multi-node lock's waits under a silent
// minority at each TTL, with the catalog's call timeout held fixed (a
// client's timeout does not grow with the TTL someone picks).
func Tolerances(ctx context.Context, cfg Config, ttls []time.Duration) ([]Tolerance, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, err := scenarios.Get("minority-partition")
	if err != nil {
		return nil, err
	}
	var out []Tolerance
	for _, ttl := range ttls {
		for _, lock := range cfg.Locks {
			if lock.Nodes < 2 {
				continue // one node: no minority to lose
			}
			sc := base.WithDefaults().Scaled(float64(ttl) / float64(base.TTL))
			sc.CallTimeout = base.CallTimeout
			ran := runBatch(ctx, cfg, sc, lock, "tolerance")
			out = append(out, tolerance(lock, ttl, nodeTimeout(lock, ttl, sc.CallTimeout), ran))
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
		}
	}
	return out, nil
}

// nodeTimeout is how long a call to a silent node waits.
func nodeTimeout(lock lockimpl.Spec, ttl, callTimeout time.Duration) time.Duration {
	if lock.NodeTimeout > 0 {
		return min(callTimeout, time.Duration(lock.NodeTimeout*float64(ttl)))
	}
	return callTimeout
}

func tolerance(lock lockimpl.Spec, ttl, timeout time.Duration, ran []*results.Cell) Tolerance {
	t := Tolerance{Lock: lock.Name, TTL: ttl, NodeTimeout: timeout}
	validity := time.Duration((1-driftFactor)*float64(ttl)) - driftFloor
	t.Live = timeout < validity
	var waits []time.Duration
	var share float64
	for _, c := range ran {
		lv := c.LivenessFigures
		if lv == nil || lv.FreeWhileTrying < 0 {
			continue
		}
		t.Windows++
		share += lv.FreeWhileTrying
		for _, s := range lv.Stretches {
			waits = append(waits, time.Duration(s.End-s.Start))
			if s.Stuck {
				t.Stuck++
			}
		}
	}
	if t.Windows > 0 {
		t.FreeShare = share / float64(t.Windows)
	}
	if len(waits) > 0 {
		slices.Sort(waits)
		t.Waits, t.Median, t.Longest = len(waits), waits[len(waits)/2], waits[len(waits)-1]
	}
	t.Agrees = t.agrees()
	return t
}

// agrees: live as predicted (no wait past the liveness bound, and the
// waits at least a node timeout: 10% slack for the timer), or stuck as
// predicted.
func (t Tolerance) agrees() bool {
	if t.Windows == 0 {
		return false
	}
	if !t.Live {
		return t.Stuck > 0
	}
	return t.Stuck == 0 && t.Waits > 0 && t.Median >= t.NodeTimeout-t.NodeTimeout/10
}

// rounds is d in node timeouts.
func (t Tolerance) rounds(d time.Duration) float64 { return float64(d) / float64(t.NodeTimeout) }

// String is the tolerance in one line.
func (t Tolerance) String() string {
	head := fmt.Sprintf("%s, TTL %s, node timeout %s", t.Lock, ttlWords(t.TTL), ttlWords(t.NodeTimeout))
	switch {
	case t.Windows == 0:
		return head + ": no minority fault judged"
	case t.Stuck > 0:
		return fmt.Sprintf("%s: stuck %d time(s) while a majority was up (longest wait %s); free %.0f%% of the faults' time",
			head, t.Stuck, ttlWords(t.Longest), 100*t.FreeShare)
	}
	return fmt.Sprintf("%s: a free key waited %s median, %s longest (%.1fx, %.1fx the node timeout); free %.0f%% of the "+
		"faults' time", head, ttlWords(t.Median), ttlWords(t.Longest), t.rounds(t.Median), t.rounds(t.Longest), 100*t.FreeShare)
}

// prediction in words.
func (t Tolerance) predicted() string {
	if !t.Live {
		return fmt.Sprintf("stuck: a %s node timeout eats the %s lease's validity", ttlWords(t.NodeTimeout), ttlWords(t.TTL))
	}
	return fmt.Sprintf("live; waits %s (a node timeout) or more", ttlWords(t.NodeTimeout))
}
