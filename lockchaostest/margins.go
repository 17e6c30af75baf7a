package lockchaostest

import (
	"context"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/margins"
)

// MarginOptions tune Margins. Zero fields take margins.Config's defaults
// (20 seeds a probe, a 5% resolution, a 10x TTL cap, every family).
type MarginOptions struct {
	// TTL is your production TTL (a 10 s TTL costs nothing in virtual
	// time).
	TTL      time.Duration
	Families []string
	Seeds    int
	Seed     int64
}

// Margins finds how far lock bends before it breaks under each fault
// family, in the simulation (Sim): the smallest pause, slow critical
// section, reply delay, one-way loss, latency and clock jump at which two
// pods held it at once, and the longest node restart that still broke it,
// each beside what a lease lock's design predicts (replica lag needs real
// Redis: its row says so). It logs one sentence
// per lock ("mylock, TTL 10.00 s, breaks under pause of 9.80 s and more;
// ...") and returns the margins; it fails t only when the search cannot
// run (a disagreement with the theory is a finding to read, not a test
// failure).
//
//	ms := lockchaostest.Margins(t, myLock, lockchaostest.MarginOptions{TTL: 10 * time.Second})
func Margins(t *testing.T, lock lockimpl.Spec, opts MarginOptions) []margins.Margin {
	t.Helper()
	cfg := margins.Config{Locks: []lockimpl.Spec{lock}, TTL: opts.TTL, Seeds: opts.Seeds, Seed: opts.Seed,
		Backend: Sim(t), OutDir: t.TempDir()}
	families, err := margins.FamiliesNamed(opts.Families)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Families = families
	// The boundaries only: the liveness margins are `lockchaos margins`'.
	rep, err := margins.Run(context.Background(), cfg, nil, nil)
	if err != nil {
		t.Fatalf("lockchaostest: margins of %s: %v", lock.Name, err)
	}
	for _, s := range rep.Sentences() {
		t.Log(s)
	}
	return rep.Margins
}
