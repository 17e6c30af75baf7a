package scenarios_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
	"github.com/lockchaos/lockchaos/workload/history"
)

// A cell too short to do anything passes nothing: it is inconclusive, with
// the reason in words, never met.
func TestCellThatCannotRunIsInconclusive(t *testing.T) {
	res := scenarios.RunCell(context.Background(), scenarios.Cell{Scenario: short("baseline", time.Nanosecond), Lock: lock(lockimpl.NameToken), Expect: scenarios.Safe},
		scenarios.Options{Seed: 1, MaxDuration: time.Nanosecond})
	if res.Outcome != results.Inconclusive || !strings.Contains(strings.Join(res.Evidence.Short, ";"), "too few cycles") {
		t.Fatalf("%s (evidence %+v)", res.Summary(), res.Evidence)
	}
}

// A fault that never reaches its dangerous moment (critical sections
// stretched to well under the TTL) proves nothing: the unsafe token lock
// passes, and the cell says it was never put to the test instead of
// reporting a miss.
func TestFaultThatNeverBitesIsInconclusive(t *testing.T) {
	sc := scenarios.Scenario{Name: "toothless-slow-holder", TTL: 300 * time.Millisecond, Duration: 600 * time.Millisecond,
		Faults: []faults.Spec{{Kind: "slow-holder", Work: 50 * time.Millisecond}},
		Expect: map[string]scenarios.Expectation{lockimpl.NameToken: scenarios.Unsafe}}
	res := scenarios.RunCell(context.Background(), scenarios.Cell{Scenario: sc, Lock: lock(lockimpl.NameToken), Expect: scenarios.Unsafe},
		scenarios.Options{Seed: 2, MaxDuration: 1200 * time.Millisecond})
	if res.Outcome != results.Inconclusive {
		t.Fatalf("%s", res.Summary())
	}
	if res.Evidence.Fired == 0 || res.Evidence.Exercised != 0 || !strings.Contains(res.Summary(), "not exercised: 0 of") {
		t.Fatalf("evidence %+v; summary %s", res.Evidence, res.Summary())
	}
	if res.Ran < 1100*time.Millisecond {
		t.Fatalf("ran %v: a cell below its floor runs on to its cap (1.2s)", res.Ran)
	}
}

// The history carries the judgments and the floor, so a re-check from the
// file alone reaches the same evidence.
func TestJudgmentsAreInTheHistory(t *testing.T) {
	dir := t.TempDir()
	res := scenarios.RunCell(context.Background(), scenarios.Cell{Scenario: short("gc-pause", time.Second), Lock: lock(lockimpl.NameFenced), Expect: scenarios.Safe},
		scenarios.Options{Seed: 3, OutDir: dir})
	if res.Outcome != results.Met || res.Evidence.Exercised < 3 {
		t.Fatalf("%s, evidence %+v", res.Summary(), res.Evidence)
	}
	h, err := history.LoadFile(res.History)
	if err != nil {
		t.Fatal(err)
	}
	judged := 0
	for _, e := range h.Events {
		if e.Kind == history.Exercised {
			judged++
			if e.Detail() == "" || e.Fault() != "client-pause" {
				t.Errorf("judgment without its sentence or fault: %+v", e)
			}
		}
	}
	if judged != res.Evidence.Fired || h.Header.Floor == nil || h.Header.Floor.MinExercised != 3 || h.Header.TTL != lockimpl.DefaultTTL {
		t.Fatalf("%d judgments for %d windows; header floor %+v ttl %v", judged, res.Evidence.Fired, h.Header.Floor, h.Header.TTL)
	}
}

func TestOptionsRejectBadFloorsScalesAndCaps(t *testing.T) {
	neg, big := -1, 2.0
	for _, o := range []scenarios.Options{
		{Floor: scenarios.FloorOverride{MinCycles: &neg}},
		{Floor: scenarios.FloorOverride{MaxIndefinite: &big}},
		{MaxDuration: -time.Second},
		{TimeScale: 0.01},
		{TimeScale: -1},
		{Clients: scenarios.MaxClients + 1},
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// TestLongCellRunsInParts: a cell longer than the part length runs as
// parts on one deployment, each with its own history checked on its own,
// their evidence summed; memory holds one part at a time.
func TestLongCellRunsInParts(t *testing.T) {
	dir := t.TempDir()
	sc := short("gc-pause", 1500*time.Millisecond)
	cell := scenarios.Cell{Scenario: sc, Lock: lock(lockimpl.NameFenced), Expect: scenarios.Safe}
	opts := scenarios.Options{Seed: 4, OutDir: dir, PartLength: 500 * time.Millisecond}
	p := scenarios.NewPlan(cell, opts)
	if len(p.Parts) != 3 || p.Parts[2].History == p.Parts[0].History || !strings.HasSuffix(p.Parts[1].History, "history-part002.jsonl") {
		t.Fatalf("parts %+v", p.Parts)
	}
	res := scenarios.Execute(context.Background(), p, opts)
	if res.Failed() {
		t.Fatalf("%s", res.Summary())
	}
	fired := 0
	for _, part := range p.Parts {
		h, err := history.LoadFile(part.History)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range h.Events {
			if e.Kind == history.Fault {
				fired++
			}
		}
	}
	if fired == 0 || fired != res.Evidence.Fired || res.Ran < time.Second {
		t.Fatalf("%d windows in the part files, %d in the evidence; ran %v", fired, res.Evidence.Fired, res.Ran)
	}
}
