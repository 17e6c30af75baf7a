package history

import (
	"reflect"
	"testing"
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
	}
	for _, s := range lines {
		var fast, strict line
		if err := parseLine([]byte(s), &fast, map[string]string{}); err != nil {
			t.Fatalf("%s: fast parser refused: %v", s, err)
		}
		if err := decodeStrict([]byte(s), &strict); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, strict) && !(len(fast.Targets) == 0 && len(strict.Targets) == 0) {
			t.Errorf("%s:\nfast   %+v\nstrict %+v", s, fast, strict)
		}
	}
	for _, s := range []string{`{"op":1,"colour":"red"}`, `{"op":1}{"op":2}`, `{"op":"one"}`, `{"op":1,"value":1.5}`, `[1]`} {
		var l line
		if err := parseLine([]byte(s), &l, map[string]string{}); err == nil {
			t.Errorf("%s: the fast parser accepted it; the strict decoder must judge it", s)
		}
	}
}
