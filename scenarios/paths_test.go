package scenarios_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// hostile are names that would climb out of --out, or let two cells share
// one history, if they became path elements as they are.
var hostile = []string{"../../../ESCAPED", "..", ".", "a/b", "x;touch${IFS}PWNED;#", ""}

// TestHostileNamesNeverLeaveOut: a cell planned with a scenario, lock or
// history name unsafe as a path element (one planned without Validate, as
// a user's go test may) names no file and fails as a harness error before
// anything starts; nothing is written, inside --out or beside it.
func TestHostileNamesNeverLeaveOut(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "a", "b", "c", "out")
	token := lock(lockimpl.NameToken)
	base := short("baseline", 300*time.Millisecond)
	var cells []scenarios.Cell
	var names []string
	for _, n := range hostile {
		sc := base
		sc.Name = n
		l := token
		l.Name = n
		cells = append(cells, scenarios.Cell{Scenario: sc, Lock: token, Expect: scenarios.Safe.Expected()},
			scenarios.Cell{Scenario: base, Lock: l, Expect: scenarios.Safe.Expected()})
		names = append(names, "", "")
	}
	for _, n := range []string{"../history.jsonl", "..", "a/h.jsonl"} {
		cells = append(cells, scenarios.Cell{Scenario: base, Lock: token, Expect: scenarios.Safe.Expected()})
		names = append(names, n)
	}
	for i, c := range cells {
		opts := scenarios.Options{Backend: process.Backend{}, Seed: 1, OutDir: out, HistoryName: names[i], PartLength: 100 * time.Millisecond, InParts: true}
		p := scenarios.NewPlan(c, opts)
		if !errors.Is(p.Err, scenarios.ErrUnsafePath) || !strings.Contains(p.Err.Error(), `letters, digits, ".", "_" and "-"`) {
			t.Errorf("%q/%q history %q: plan error %v, want ErrUnsafePath naming the allowed set", c.Scenario.Name, c.Lock.Name, names[i], p.Err)
		}
		if p.History != "" || len(p.Parts) == 0 || p.Parts[0].History != "" {
			t.Errorf("%q/%q: the plan still names files: %q, %+v", c.Scenario.Name, c.Lock.Name, p.History, p.Parts)
		}
		res := scenarios.Execute(context.Background(), p, opts)
		if res.Outcome != results.HarnessError || res.History != "" {
			t.Errorf("%q/%q: %s, want a harness error and no history", c.Scenario.Name, c.Lock.Name, res.Summary())
		}
	}
	var written []string
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, _ error) error {
		if path != root && !d.IsDir() || d.IsDir() && strings.HasSuffix(path, "ESCAPED") {
			written = append(written, path)
		}
		return nil
	})
	if len(written) > 0 {
		t.Fatalf("hostile names wrote %v", written)
	}
}

// TestEveryPlannedPathIsUnderOut is the second line of defence on its
// own: a plan whose history or part files are not under the output folder
// is refused, however they came to be.
func TestEveryPlannedPathIsUnderOut(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	good := scenarios.NewPlan(scenarios.Cell{Scenario: short("baseline", 300*time.Millisecond), Lock: lock(lockimpl.NameToken),
		Expect: scenarios.Safe.Expected()}, scenarios.Options{Backend: process.Backend{}, OutDir: out, PartLength: 100 * time.Millisecond, InParts: true})
	if good.Err != nil || len(good.Parts) < 3 {
		t.Fatalf("plan: %v, %d parts", good.Err, len(good.Parts))
	}
	if err := scenarios.Outside(out, good); err != nil {
		t.Fatalf("a plan of safe names: %v", err)
	}
	for _, bad := range []string{filepath.Join(out, "..", "history.jsonl"), filepath.Join(out, "..", "..", "..", "ESCAPED", "h.jsonl"),
		out + "2/h.jsonl", "/etc/h.jsonl", "h.jsonl"} {
		p := *good
		p.History = bad
		if err := scenarios.Outside(out, &p); !errors.Is(err, scenarios.ErrUnsafePath) {
			t.Errorf("history %s: %v", bad, err)
		}
		p = *good
		p.Parts = append([]scenarios.Part(nil), good.Parts...)
		p.Parts[1].History = bad
		if err := scenarios.Outside(out, &p); !errors.Is(err, scenarios.ErrUnsafePath) {
			t.Errorf("part history %s: %v", bad, err)
		}
	}
}

// TestTwoCellsNeverShareAHistory: the cells of a matrix write distinct
// files, all under the output folder (a lock named ".." once made
// baseline/.. and slow-holder/.. both write OUT/history.jsonl).
func TestTwoCellsNeverShareAHistory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	cells, err := scenarios.Select(scenarios.Catalog(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, c := range cells {
		p := scenarios.NewPlan(c, scenarios.Options{Backend: process.Backend{}, OutDir: out})
		if p.Err != nil || !strings.HasPrefix(p.History, out+string(filepath.Separator)) {
			t.Fatalf("%s: %q, %v", c.Name(), p.History, p.Err)
		}
		if prev, dup := seen[p.History]; dup {
			t.Fatalf("%s and %s both write %s", prev, c.Name(), p.History)
		}
		seen[p.History] = c.Name()
	}
}
