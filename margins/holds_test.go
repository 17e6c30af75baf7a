package margins

import (
	"strings"
	"testing"
	"time"
)

// TestHoldsSaysWhenItRestsOnInconclusiveRuns: a probe whose every run was
// inconclusive broke nothing but held nothing either; the table's "holds
// at" says so, and a confirmation whose held side was all inconclusive
// does not agree.
func TestHoldsSaysWhenItRestsOnInconclusiveRuns(t *testing.T) {
	ttl := 300 * time.Millisecond
	m := Margin{Lock: "token", Family: "pause", TTL: ttl, Broke: true, At: 300 * time.Millisecond, Held: 285 * time.Millisecond,
		Probes: []Probe{{Magnitude: 285 * time.Millisecond, Runs: 4, Inconclusive: 4}, {Magnitude: 300 * time.Millisecond, Runs: 4, Broke: 2}},
		Below:  &Probe{Magnitude: 285 * time.Millisecond, Runs: 5, Inconclusive: 5}, Above: &Probe{Magnitude: 300 * time.Millisecond, Runs: 5, Broke: 1}}
	var b strings.Builder
	(&Report{Margins: []Margin{m}}).WriteTable(&b)
	for _, want := range []string{"285 ms (0.95x), on 0 decisive run(s) of 4 (4 inconclusive)", "0/5 (5 inconclusive) at 285 ms"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	m.Probes[0].Inconclusive = 0
	if h := m.holds(); h != "285 ms (0.95x)" {
		t.Errorf("holds %q on 4 decisive runs", h)
	}
}
