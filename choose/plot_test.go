package choose

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// Every plot is well-formed SVG with a mark per figure it shows, and the
// page holds the tables and every plot.
func TestPlotsAreWellFormedAndShowEveryFigure(t *testing.T) {
	rec := Recovery{Cause: "crashed", N: 3, AllTTL: []float64{1, 1.1, 2.5}, MaxTTL: 2.5}
	tab := &Table{Seeds: 1, MarginFamilies: []string{"pause"}, Families: []Family{{Name: NoFaults}}, Rows: []*Row{
		{Name: "a <lock>", Liveness: Liveness{Crash: rec}, Safety: []*Cell{{Family: NoFaults, Runs: 1}},
			Cost:    &Cost{FloorOp: "PING", FloorP50: time.Millisecond, RatioP50: 2.5, RatioP99: 4},
			Margins: []Margin{{Family: "pause", Broke: true, AtTTL: 1.05, CapTTL: 10}}},
		{Name: "b", Safety: []*Cell{{Family: NoFaults, Runs: 1}}, Margins: []Margin{{Family: "pause", CapTTL: 10}}},
	}}
	plots := tab.plots()
	if len(plots) != 3 {
		t.Fatalf("%d plots, want recovery, cost and margins", len(plots))
	}
	marks := map[string]int{"recovery.svg": 3, "cost.svg": 1, "margins.svg": 2}
	for _, p := range plots {
		d := xml.NewDecoder(strings.NewReader(p.svg))
		n := 0
		for {
			tok, err := d.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v\n%s", p.file, err, p.svg)
			}
			if se, ok := tok.(xml.StartElement); ok && (se.Name.Local == "circle" || se.Name.Local == "rect") {
				n++
			}
		}
		if want := marks[p.file]; n < want {
			t.Errorf("%s: %d marks, want at least %d", p.file, n, want)
		}
		if !strings.Contains(p.svg, "a &lt;lock&gt;") {
			t.Errorf("%s: the row's name is not escaped", p.file)
		}
	}
	var b strings.Builder
	tab.WriteHTML(&b)
	if strings.Count(b.String(), "<svg") != 3 || strings.Contains(b.String(), "a <lock>") {
		t.Errorf("the page holds %d plots, or an unescaped name", strings.Count(b.String(), "<svg"))
	}
}
