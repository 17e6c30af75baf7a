package history

import (
	"path/filepath"
	"testing"
	"time"
)

// benchLines are the lines a recorder writes most (a write's call and
// return, an acquire's return with its token and fence), the ones with
// escapes (an error text with quotes, format 4's fault targets with
// "->"), format 5's typed windows and judgments, and witness events.
func benchLines() map[string][]line {
	v, tok := int64(41), "94169ca2c268ab31c14299285f6b3923"
	return map[string][]line{
		"plain": {
			{Op: 1234567, Phase: phaseCall, T: 81234567890, Kind: Write, Client: 3, Key: "order:1", Token: tok, Fence: 77, Value: &v},
			{Op: 1234567, Phase: phaseReturn, T: 81234569999, Client: 3, Outcome: Ok, Value: &v},
			{Op: 1234568, Phase: phaseReturn, T: 81234570000, Client: 4, Token: tok, Fence: 78, Outcome: Ok, Value: &v},
		},
		"escaped": {
			{Op: 1234569, Phase: phaseReturn, T: 81234571111, Client: 5, Outcome: Indefinite, Value: &v,
				Err: `read tcp 127.0.0.1:54321->127.0.0.1:6379: i/o timeout "x"`},
			// Format 4's fault line (its targets read by legacy.go).
			{Op: 1234570, Phase: phaseCall, T: 81234572222, Kind: Fault, Client: -1, Value: &v, Window: &Window{Fault: "latency"},
				Targets: []string{"delay=450ms", "client0->node0", "client1->node0"}},
		},
		"window": {
			{Op: 1234570, Phase: phaseCall, T: 81234572222, Kind: Fault, Client: -1, Window: FaultWindow("latency",
				Hit{Delay: 450 * time.Millisecond, Links: []string{"client0->node0", "client1->node0"}})},
			{Op: 1234573, Phase: phasePoint, T: 81234575555, Kind: Exercised, Client: -1, Outcome: Ok, Window: &Window{Fault: "pod-crash",
				Hit:      &Hit{Pods: []int{3}, StopsHolder: true, Abandons: true},
				Judgment: &Judged{Window: 1234560, Exercised: true, Lease: LeaseObserved, Detail: `client 3 crashed "holding" order:1`}}},
		},
		"witness": {
			{Op: 1234571, Phase: phasePoint, T: 81234573333, Kind: Witness, Client: -1, Key: "order:1", Token: tok, Outcome: Ok,
				Window: WitnessWindow(ServerAct{Node: "node0", Act: ServerSet, Deadline: 81534573333})},
			{Op: 1234572, Phase: phasePoint, T: 81234574444, Kind: Witness, Client: -1, Key: "order:1", Token: tok, Outcome: Ok,
				Window: WitnessWindow(ServerAct{Node: "node0", ServerKey: "order:1:fence", Act: ServerDel})},
		},
	}
}

func BenchmarkAppendLine(b *testing.B) {
	for name, ls := range benchLines() {
		b.Run(name, func(b *testing.B) {
			buf := make([]byte, 0, 512)
			b.ReportAllocs()
			for i := range b.N {
				buf, _ = appendLine(buf[:0], ls[i%len(ls)])
			}
		})
	}
}

func BenchmarkParseLine(b *testing.B) {
	for name, ls := range benchLines() {
		var raws [][]byte
		for _, l := range ls {
			raw, _ := appendLine(nil, l)
			raws = append(raws, raw)
		}
		b.Run(name, func(b *testing.B) {
			p := newLineParser()
			var l line
			b.ReportAllocs()
			for i := range b.N {
				if err := p.parse(raws[i%len(raws)], &l); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoadFile reads a 200,000-event history (about 400,000 lines,
// parsed on every core) as the checker does.
func BenchmarkLoadFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "h.jsonl")
	if err := WriteFile(path, bigHistory(200_000)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	b.ReportAllocs()
	for range b.N {
		if _, err := LoadFile(path); err != nil {
			b.Fatal(err)
		}
	}
}
