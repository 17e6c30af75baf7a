package history

import (
	"reflect"
	"strings"
	"testing"
)

// Every fault window's targets as formats 1 to 4 wrote them read into a
// Hit, and Hit.Words gives them back as they were: what a report or a
// sentence shows of a window is the same in every format.
func TestOldTargetsReadIntoAHitAndBack(t *testing.T) {
	for _, targets := range [][]string{
		{"client3", "stops-holder", "abandons"},                         // abandoned-lease
		{"client3", "stops-holder", "abandons", "restart=200ms"},        // pod-crash
		{"client0", "direction=both", "stops-holder", "client0->node0"}, // client-partition
		{"client2"}, // client-pause, slow-holder
		{"client1", "client1->node0", "client1->node1"},     // latency
		{"node2", "jump=600ms", "bare-majority"},            // clock-jump
		{"node0", "jump=-300ms"},                            // clock-jump back
		{"node0", "node1"},                                  // failover, sentinel-failover
		{"node0", "node1", "jump=1.5s"},                     // replica-clock-skew
		{"node2", "direction=upstream", "down=node2"},       // minority-partition
		{"node0", "down=node0"},                             // node-restart
		{"delay=450ms", "client0->node0", "client1->node0"}, // slow-reply
	} {
		if got := hitOf(targets).Words(); !reflect.DeepEqual(got, targets) {
			t.Errorf("%q read as %+v, written back as %q", targets, hitOf(targets), got)
		}
	}
}

// A format 4 line that gives format 5's typed fields, or a format 5 line
// that gives format 4's words, is bad input.
func TestFormatsDoNotMix(t *testing.T) {
	for _, c := range []struct{ format, line, want string }{
		{"4", `{"op":0,"phase":"call","t":1,"kind":"fault","client":-1,"fault":"x","hit":{"pods":[1]}}`, "format 4 history with format 5's typed fields"},
		{"5", `{"op":0,"phase":"call","t":1,"kind":"fault","client":-1,"fault":"x","targets":["client1"]}`, "targets and detail are format 4's"},
		{"5", `{"op":0,"phase":"point","t":1,"kind":"witness","client":-1,"outcome":"ok"}`, "witness event without a node"},
	} {
		_, err := Load(strings.NewReader(`{"format":`+c.format+`,"scenario":"s","lock":"l","seed":1,"start":"2026-01-01T00:00:00Z"}`+"\n"+c.line+"\n"), "h.jsonl")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("format %s: %s: %v, want %q", c.format, c.line, err, c.want)
		}
	}
}
