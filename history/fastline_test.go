package history

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// TestFastLineParserAgreesWithEncodingJSON: the loader's scanner reads
// every line a recorder writes exactly as encoding/json does, and hands
// anything unusual to it.
func TestFastLineParserAgreesWithEncodingJSON(t *testing.T) {
	lines := []string{
		`{"op":3,"phase":"call","t":120,"kind":"write","client":2,"key":"order:1","token":"ab","fence":7,"value":5}`,
		`{"op":3,"phase":"return","t":130,"client":2,"outcome":"indefinite","value":null,"error":"i/o timeout: \"x\" \u003e y\n"}`,
		`{"op":4,"phase":"point","t":140,"kind":"fault","client":-1,"value":0,"fault":"slow-reply","targets":["delay=450ms","client0-\u003enode0"],"detail":"é ok"}`,
		` { "op" : 5 , "phase" : "call" , "t" : 0 , "client" : 0 , "targets" : [ ] } `,
		`{"op":6,"phase":"call","t":150,"kind":"fault","client":-1,"fault":"pod-crash","hit":{"pods":[3],"stops_holder":true,"abandons":true,"restart_ns":1000000000}}`,
		`{"op":7,"phase":"point","t":160,"kind":"exercised","client":-1,"outcome":"ok","fault":"slow-reply","hit":{"delay_ns":450000000,"links":["client0-\u003enode0"]},"judgment":{"window":6,"exercised":true,"lease":"observed","detail":"a \"b\""}}`,
		`{"op":8,"phase":"point","t":170,"kind":"witness","client":-1,"key":"k","token":"v","outcome":"ok","witness":{"node":"node0","server_key":"k:f","act":"set","deadline":99}}`,
		`{"op":9,"phase":"point","t":180,"kind":"probe","client":-1,"key":"k","outcome":"ok","probe":{"node":"node1","exists":true,"value":"v"}}`,
		`{"op":10,"phase":"call","t":190,"kind":"fault","client":-1,"fault":"x","hit":{"pods":[],"nodes":null,"down":["a","b"],"bare_majority":false}}`,
		`{"op":11,"phase":"call","t":190,"kind":"fault","client":-1,"hit":null,"judgment":null,"probe":null,"witness":null}`,
	}
	for _, s := range lines {
		var fast, strict line
		if err := newLineParser().parse([]byte(s), &fast); err != nil {
			t.Fatalf("%s: fast parser refused: %v", s, err)
		}
		if err := decodeStrict([]byte(s), &strict); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, strict) && (len(fast.Targets) != 0 || len(strict.Targets) != 0) {
			t.Errorf("%s:\nfast   %+v\nstrict %+v", s, fast, strict)
		}
	}
	for _, s := range strictOnly {
		var l line
		if err := newLineParser().parse([]byte(s), &l); err == nil {
			t.Errorf("%s: the fast parser accepted it; the strict decoder must judge it", s)
		}
	}
}

// strictOnly are lines the fast parser must hand to the strict decoder:
// not the shape a recorder writes, and some not JSON at all. The parser
// before internal/jsonl read the last four itself, and not as
// encoding/json does: a repeated field (a value then null is nil to
// encoding/json, a second targets list replaces the first), a leading
// zero and a Go-only escape (both refused by encoding/json).
var strictOnly = []string{`{"op":1,"colour":"red"}`, `{"op":1}{"op":2}`, `{"op":"one"}`, `{"op":1,"value":1.5}`, `[1]`,
	`{"op":1,"OP":2}`, `{"op":1,"value":5,"value":null}`, `{"op":1,"targets":["a"],"targets":["b"]}`, `{"op":01}`,
	`{"op":1,"detail":"\x41"}`, `{"op":1,"hit":{"pods":[1],"pods":[2]}}`, `{"op":1,"hit":{"colour":1}}`,
	`{"op":1,"hit":{"stops_holder":1}}`, `{"op":1,"judgment":{"window":1.5}}`, `{"op":1,"witness":{"node":"a"},"witness":null}`}

// FuzzParseLine: whatever the fast parser reads, the strict decoder reads
// the same.
func FuzzParseLine(f *testing.F) {
	for _, s := range strictOnly {
		f.Add([]byte(s))
	}
	for _, ls := range benchLines() {
		for _, l := range ls {
			b, _ := appendLine(nil, l)
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast, strict line
		if newLineParser().parse(b, &fast) != nil {
			return
		}
		if err := decodeStrict(b, &strict); err != nil {
			t.Fatalf("%q: the fast parser read %+v, the strict decoder refuses it: %v", b, fast, err)
		}
		if len(fast.Targets) == 0 && len(strict.Targets) == 0 {
			fast.Targets, strict.Targets = nil, nil
		}
		if !reflect.DeepEqual(fast, strict) {
			t.Fatalf("%q:\nfast   %+v\nstrict %+v", b, fast, strict)
		}
	})
}

// TestAppendLineIsJSONMarshal: the recorder's encoder writes every line
// byte for byte as json.Marshal does: random fields, every kind and
// outcome, strings json.Marshal escapes (quotes, control characters, HTML
// characters, non-ASCII, invalid UTF-8), empty and nil targets, zero and
// nil values; and hands unnamed kinds and outcomes to it.
func TestAppendLineIsJSONMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	strs := []string{"", "order:1", "94169ca2c268ab31c14299285f6b3923", `say "hi"`, `back\slash`, "tab\there", "nl\n", "<a&b>",
		"é ok", "\xff\xfe", "\u2028", "del\x7f", "client0->node0", "delay=450ms", "i/o timeout"}
	str := func() string { return strs[rng.IntN(len(strs))] }
	for i := range 20000 {
		l := line{Op: rng.Int64N(1 << 40), Phase: []string{phaseCall, phaseReturn, phasePoint}[rng.IntN(3)], T: rng.Int64N(1<<50) - 1<<20,
			Kind: Kind(rng.IntN(len(kindNames))), Client: rng.IntN(20) - 1, Key: str(), Token: str(), Outcome: Outcome(rng.IntN(len(outcomeNames))),
			Err: str(), Detail: str()}
		if rng.IntN(2) == 0 {
			l.win().Fault = str()
		}
		if rng.IntN(2) == 0 {
			l.Fence = rng.Uint64() >> rng.IntN(64)
		}
		if rng.IntN(3) > 0 {
			v := rng.Int64N(100) - 50
			l.Value = &v
		}
		switch rng.IntN(3) {
		case 0:
			l.Targets = []string{}
		case 1:
			for range 1 + rng.IntN(3) {
				l.Targets = append(l.Targets, str())
			}
		}
		randomWindow(rng, &l, str)
		want, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendLine([]byte("junk"), l)
		if !ok || string(got) != "junk"+string(want) {
			t.Fatalf("line %d %+v:\n got %s (ok %v)\nwant %s", i, l, got, ok, want)
		}
	}
	for _, l := range []line{{Kind: Kind(len(kindNames))}, {Outcome: Outcome(200)}} {
		if _, ok := appendLine(nil, l); ok {
			t.Errorf("%+v: encoded, want it left to json.Marshal (which refuses it)", l)
		}
	}
}

// randomWindow gives l random typed payloads, each field set or not.
func randomWindow(rng *rand.Rand, l *line, str func() string) {
	strs := func() []string {
		var out []string
		for range rng.IntN(3) {
			out = append(out, str())
		}
		return out
	}
	bit := func() bool { return rng.IntN(2) == 0 }
	if bit() {
		h := &Hit{Nodes: strs(), Direction: str(), StopsHolder: bit(), Abandons: bit(), BareMajority: bit(),
			Down: strs(), Links: strs(), Delay: time.Duration(rng.Int64N(3) - 1), Jump: time.Duration(rng.Int64N(3) - 1),
			Restart: time.Duration(rng.Int64N(2))}
		for range rng.IntN(3) {
			h.Pods = append(h.Pods, rng.IntN(300)-1)
		}
		l.win().Hit = h
	}
	if bit() {
		l.win().Judgment = &Judged{Window: rng.Int64N(9) - 1, Exercised: bit(), Lease: str(), Detail: str()}
	}
	if bit() {
		l.win().Probe = &Probed{Node: str(), Exists: bit(), Value: str()}
	}
	if bit() {
		l.win().Witness = &ServerAct{Node: str(), ServerKey: str(), Act: str(), Deadline: rng.Int64N(3) - 1}
	}
}
