package lockchaostest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/choose"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// ChooseOptions tune Choose. The zero value puts the lock beside the
// built-in locks of its service in every scenario of that service, 3
// seeds each.
type ChooseOptions struct {
	// Beside are the locks the table shows yours beside (default: every
	// built-in lock of your lock's service).
	Beside []string
	// Scenarios narrows the catalog's scenarios (default: all of your
	// lock's service).
	Scenarios []string
	// Seeds runs per cell (default 3, 1 with Quick); Seed the first.
	Seeds int
	Seed  int64
	// Quick keeps one scenario per row and family, no margins search.
	Quick bool
	// Options are Run's: the backend, the time scale, where histories go.
	Options
}

// Choose puts lock in the which-lock table (`lockchaos choose`) beside
// reference locks: every catalog scenario of its service on its own
// deployment, run and measured exactly like theirs (safety per fault
// family over the seeds, recovery, a cycle's cost over the service's
// bare round trip), and returns the table. Your lock's cells are
// reported, not gated (it has no expectations in the catalog); a
// reference's disagreement with its own fails t, as `lockchaos choose`
// exits 1. It logs the table and each row's sentence.
//
//	tab := lockchaostest.Choose(t, myLock, lockchaostest.ChooseOptions{Beside: []string{"token", "fenced"}})
func Choose(t *testing.T, lock lockimpl.Spec, opts ChooseOptions) *choose.Table {
	t.Helper()
	if opts.Backend == nil {
		needRedisServer(t)
		opts.Backend = process.Backend{}
	}
	if _, err := lockimpl.Lookup(lock.Name); err == nil || slices.Contains(opts.Beside, lock.Name) {
		t.Fatalf("lockchaostest: your lock is named %q, as a lock of the registry or of Beside: give it a name of its own "+
			"(its rows would merge with the other's)", lock.Name)
	}
	cells, err := chooseCells(lock, opts)
	if err != nil {
		t.Fatalf("lockchaostest: %v", err)
	}
	seed := seedFor(t, opts.Seed)
	dir := outputDir(t, opts.Options)
	test := t.Name()
	tab, _, err := choose.Run(t.Context(), choose.Options{Cells: cells, Quick: opts.Quick, Seeds: opts.Seeds,
		Seed: seed, Backend: opts.Backend, TimeScale: opts.TimeScale,
		CellOptions: func(on scenarios.Timing) scenarios.Options {
			return scenarios.Options{Seed: seed, OutDir: dir, Duration: opts.Duration, Backend: opts.Backend,
				TimeScale: on.Scale, NodeOpTime: on.NodeOp, PostgresNodeOpTime: on.PostgresNodeOp,
				Rerun: func(p *scenarios.Plan) string {
					return fmt.Sprintf("%s=%d go test -run '^%s$'", SeedEnv, p.RunSeed, regexp.QuoteMeta(test))
				}}
		}})
	if err != nil {
		t.Fatalf("lockchaostest: the table of %s: %v", lock.Name, err)
	}
	var b strings.Builder
	tab.WriteText(&b)
	t.Log("\n" + b.String())
	for _, d := range tab.Disagreements {
		t.Errorf("lockchaostest: %s disagrees with its expectation: %s\nrerun: %s", d.Cell, d.Why, d.Rerun)
	}
	switch tab.ExitCode() {
	case reports.ExitHarness:
		t.Errorf("lockchaostest: no run of the table decided anything: the harness could not run its cells")
	case reports.ExitInconclusive:
		t.Errorf("lockchaostest: the table is inconclusive: these cells decided nothing in any run: %s",
			strings.Join(tab.Holes(), ", "))
	}
	return tab
}

// chooseCells are the table's cells: the references' from the catalog,
// and lock in every scenario of its service on its own deployment,
// expected either (reported, not gated).
func chooseCells(lock lockimpl.Spec, opts ChooseOptions) ([]scenarios.Cell, error) {
	catalog := scenarios.Catalog()
	if len(opts.Scenarios) > 0 {
		catalog = slices.DeleteFunc(catalog, func(s scenarios.Scenario) bool { return !slices.Contains(opts.Scenarios, s.Name) })
	}
	beside := opts.Beside
	if len(beside) == 0 {
		for _, s := range lockimpl.Specs() {
			if s.Service.Or() == lock.Service.Or() && s.Nodes > 0 && s.Name != lock.Name {
				beside = append(beside, s.Name)
			}
		}
	}
	cells, err := scenarios.Select(catalog, nil, beside)
	if err != nil {
		return nil, err
	}
	for _, s := range catalog {
		if s.Topology == deployment.Cluster || s.Topology == deployment.Sentinel || !servesService(s, lock) {
			continue
		}
		cells = append(cells, scenarios.Cell{Scenario: s, Lock: lock,
			Expect: results.Expect{Safety: results.Either, Liveness: results.Either}})
	}
	return cells, nil
}

// servesService says a scenario runs locks of lock's service.
func servesService(s scenarios.Scenario, lock lockimpl.Spec) bool {
	for name := range s.Expect {
		if spec, err := lockimpl.Lookup(name); err == nil && spec.Service.Or() == lock.Service.Or() && spec.Nodes > 0 {
			return true
		}
	}
	return false
}
