package scenarios_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// A lock whose constructor refuses the deployment (lockimpl.Unsupported,
// or an error wrapping ErrUnsupported) skips the cell with its reason and
// no verdict, where any other constructor error is a harness error.
func TestRefusingLockSkipsTheCell(t *testing.T) {
	sc, err := scenarios.Get("baseline")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		refusal error
		want    results.Outcome
		why     string
	}{
		{lockimpl.Unsupported("no single node, thanks"), results.Skipped,
			"not supported by refuser on a single deployment: no single node, thanks"},
		{fmt.Errorf("init: %w: cluster mode only", lockimpl.ErrUnsupported), results.Skipped, "cluster mode only"},
		{fmt.Errorf("config service unreachable"), results.HarnessError, "config service unreachable"},
	} {
		lock := lockimpl.Spec{Name: "refuser", Nodes: 1, New: func(lockimpl.Env) (lockimpl.Locker, error) { return nil, c.refusal }}
		res := scenarios.Run(context.Background(), sc, lock, scenarios.Safe, scenarios.Options{Seed: 1, Backend: simBackend(t)})
		skipLine := c.want != results.Skipped || strings.HasPrefix(res.Error, "not supported by refuser on a single deployment: ")
		if res.Outcome != c.want || !strings.Contains(res.Error, c.why) || !skipLine || res.Verdict != "" {
			t.Errorf("%v: outcome %s, verdict %q, error %q; want %s saying %q, no verdict", c.refusal, res.Outcome, res.Verdict, res.Error, c.want, c.why)
		}
	}
}
