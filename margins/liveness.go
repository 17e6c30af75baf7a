package margins

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// Recovery is the liveness margin of one lock at one TTL: how long the
// key stays taken after its holder crashed (pod-crash), over a batch of
// seeds. DESIGN §1's trade-off in numbers: a longer TTL rides out longer
// pauses and stays stuck longer after a crash.
type Recovery struct {
	Lock string        `json:"lock"`
	TTL  time.Duration `json:"ttl_ns"`
	// Judged crashes, and how many never recovered within the cell.
	Judged int `json:"judged"`
	Stuck  int `json:"stuck"`
	// Median and Max recovery times of those that recovered.
	Median time.Duration `json:"median_ns,omitempty"`
	Max    time.Duration `json:"max_ns,omitempty"`
	// Predicted: a crashed holder's key is freed when its lease lapses,
	// at most one lease after the crash (plus a retry gap); never for a
	// key without expiry.
	Predicted time.Duration `json:"predicted_max_ns,omitempty"`
	Agrees    bool          `json:"agrees"`
}

// Recoveries measures each lock's recovery after a crash at each TTL.
func Recoveries(ctx context.Context, cfg Config, ttls []time.Duration) ([]Recovery, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, err := scenarios.Get("pod-crash")
	if err != nil {
		return nil, err
	}
	var out []Recovery
	for _, ttl := range ttls {
		for _, lock := range cfg.Locks {
			sc := base.WithDefaults()
			if lock.Lease > 0 {
				// Long enough to see a longer lease lapse after a crash.
				sc.Duration = max(sc.Duration, time.Duration((lock.Lease+2)*float64(sc.TTL)))
				sc.RecoverWithin = time.Duration((lock.Lease+1)*float64(sc.TTL)) + 60*time.Millisecond
			}
			sc = sc.Scaled(float64(ttl) / float64(base.TTL))
			ran := runBatch(ctx, cfg, sc, lock, "recovery")
			r := Recovery{Lock: lock.Name, TTL: ttl, Predicted: predictedRecovery(lock, ttl)}
			var took []time.Duration
			for _, c := range ran {
				if c.LivenessFigures == nil {
					continue
				}
				for _, rc := range c.LivenessFigures.Recoveries {
					if !rc.Judged {
						continue
					}
					r.Judged++
					if rc.Stuck || !rc.Recovered {
						r.Stuck++
						continue
					}
					took = append(took, rc.After)
				}
			}
			if len(took) > 0 {
				slices.Sort(took)
				r.Median, r.Max = took[len(took)/2], took[len(took)-1]
			}
			r.Agrees = r.agrees()
			out = append(out, r)
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
		}
	}
	return out, nil
}

func predictedRecovery(lock lockimpl.Spec, ttl time.Duration) time.Duration {
	switch {
	case lock.Lease < 0:
		return 0 // never
	case lock.Lease > 0:
		return time.Duration(lock.Lease*float64(ttl)) + retryGap
	}
	return ttl + retryGap
}

// agrees: a key without expiry stays stuck; any other is freed within
// its lease and a retry gap (10% slack for a loaded scheduler).
func (r Recovery) agrees() bool {
	if r.Predicted == 0 {
		return r.Judged == 0 || r.Stuck == r.Judged
	}
	return r.Judged > 0 && r.Stuck == 0 && r.Max <= r.Predicted+r.Predicted/10
}

// String is the recovery in one line.
func (r Recovery) String() string {
	if r.Judged == 0 {
		return fmt.Sprintf("%s, TTL %s: no crash judged", r.Lock, ttlWords(r.TTL))
	}
	if r.Median == 0 {
		return fmt.Sprintf("%s, TTL %s: stuck after %d of %d crashes", r.Lock, ttlWords(r.TTL), r.Stuck, r.Judged)
	}
	return fmt.Sprintf("%s, TTL %s: freed after a crash in %s median, %s max (%.2fx TTL), %d of %d stuck",
		r.Lock, ttlWords(r.TTL), ttlWords(r.Median), ttlWords(r.Max), float64(r.Max)/float64(r.TTL), r.Stuck, r.Judged)
}

// runBatch runs one liveness cell on the config's seeds, ungated.
func runBatch(ctx context.Context, cfg Config, sc scenarios.Scenario, lock lockimpl.Spec, dir string) []*results.Cell {
	return runSeeds(ctx, scenarios.Cell{Scenario: sc, Lock: lock,
		Expect: results.Expect{Safety: results.Either, Liveness: results.Either}},
		scenarios.MatrixOptions{Options: scenarios.Options{Seed: cfg.Seed, Backend: cfg.Backend, TimeScale: cfg.TimeScale,
			NodeOpTime: cfg.NodeOpTime, OutDir: filepath.Join(cfg.OutDir, dir)}, Parallel: cfg.Parallel, Repeat: cfg.Seeds})
}
