package jsonl

import (
	"encoding/json"
	"reflect"
	"testing"
)

// nested is a line with a nested object, a list and booleans: the shapes
// format 5's windows have.
type nested struct {
	N  int64    `json:"n"`
	In *inner   `json:"in"`
	L  []string `json:"l"`
}

type inner struct {
	B bool `json:"b"`
}

func readNested(line []byte, v *nested) bool {
	*v = nested{}
	var s Scanner
	s.Reset(line)
	return s.Object(func(name []byte) (bit uint64, ok bool) {
		switch string(name) {
		case "n":
			v.N, ok = s.Int(64)
			return 1 << 0, ok
		case "in":
			v.In = &inner{}
			return 1 << 1, s.Object(func(name []byte) (uint64, bool) {
				if string(name) != "b" {
					return 0, false
				}
				var ok bool
				v.In.B, ok = s.Bool()
				return 1, ok
			})
		case "l":
			return 1 << 2, s.Array(func() bool {
				t, ok := s.String()
				v.L = append(v.L, t)
				return ok
			})
		}
		return 0, false
	}) && s.End()
}

// Object, Array and Bool read what encoding/json reads, and refuse what a
// reader must leave to it.
func TestObjectArrayBool(t *testing.T) {
	for _, line := range []string{`{}`, `{"n":1,"in":{"b":true},"l":["a","b"]}`, ` { "in" : { "b" : false } , "l" : [ ] } `,
		`{"in":{},"l":null}`} {
		var fast, strict nested
		if !readNested([]byte(line), &fast) {
			t.Fatalf("%s: refused", line)
		}
		if err := json.Unmarshal([]byte(line), &strict); err != nil {
			t.Fatal(err)
		}
		if len(strict.L) == 0 {
			strict.L = nil
		}
		if !reflect.DeepEqual(fast, strict) {
			t.Errorf("%s: read %+v, encoding/json %+v", line, fast, strict)
		}
	}
	for _, line := range []string{`{"n":1,"n":2}`, `{"in":{"b":true,"b":false}}`, `{"in":{"b":1}}`, `{"in":{"b":tru}}`,
		`{"l":["a",]}`, `{"l":["a" "b"]}`, `{"x":1}`, `{"n":1}{}`, `{"n":1,}`, `{"in":{"b":truex}}`} {
		var v nested
		if readNested([]byte(line), &v) {
			t.Errorf("%s: read %+v, want it left to encoding/json", line, v)
		}
	}
}
