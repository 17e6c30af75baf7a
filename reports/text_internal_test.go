package reports

import (
	"testing"

	"github.com/lockchaos/lockchaos/results"
)

func TestTotalsReadAsWordsWorstFirst(t *testing.T) {
	got := totalsText(map[string]int{"met": 3, "regression": 1, "inconclusive": 2})
	if got != "1 regression, 2 inconclusive, 3 met" {
		t.Fatalf("totals %q", got)
	}
	if got := totalsText(nil); got != "no cells" {
		t.Fatalf("empty totals %q", got)
	}
}

func TestOutcomeColours(t *testing.T) {
	if got := paint(false, results.Regression, "regression", 13); got != "regression   " {
		t.Fatalf("colour off: %q", got)
	}
	if got := paint(true, results.Regression, "regression", 13); got != "\x1b[1;31mregression   \x1b[0m" {
		t.Fatalf("colour on: %q", got)
	}
}
