package reports

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/results"
)

// TestOneMatrixOrder: the terminal's table, Markdown and HTML show the
// scenarios and locks in the one order the cells were planned in, read
// from the summary alone: a lock the registry lists first (naive) comes
// after one planned first (zeta, which no registry knows).
func TestOneMatrixOrder(t *testing.T) {
	cell := func(sc, lock string) *results.Cell {
		return &results.Cell{Scenario: sc, Lock: lock, Expect: results.Safe, Outcome: results.Met}
	}
	s := &Summary{Seed: 1, Cells: []*results.Cell{cell("slow", "zeta"), cell("slow", "naive"), cell("fast", "naive"),
		cell("fast", "zeta")}}
	s.Tally()
	scens, locks := Order(s)
	if !slices.Equal(scens, []string{"slow", "fast"}) || !slices.Equal(locks, []string{"zeta", "naive"}) {
		t.Fatalf("Order: %v, %v", scens, locks)
	}
	if v := indexData(s, nil); !slices.Equal(v.Locks, locks) || v.Rows[0].Scenario != "slow" {
		t.Errorf("HTML: columns %v, first row %s", v.Locks, v.Rows[0].Scenario)
	}
	md := Markdown(s)
	if strings.Index(md, "`zeta`") > strings.Index(md, "`naive`") || strings.Index(md, " slow |") > strings.Index(md, " fast |") {
		t.Errorf("Markdown not in the planned order:\n%s", md)
	}
	var text strings.Builder
	WriteText(&text, s, false)
	if strings.Index(text.String(), "zeta") > strings.Index(text.String(), "naive") {
		t.Errorf("text not in the planned order:\n%s", text.String())
	}
}
