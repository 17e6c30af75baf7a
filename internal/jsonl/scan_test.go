package jsonl

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
)

// flat is the shape the readers read: a flat object of known fields.
type flat struct {
	S string `json:"s"`
	T string `json:"t"`
	I int64  `json:"i"`
	B int8   `json:"b"`
	U uint64 `json:"u"`
	P *int64 `json:"p"`
}

// readFlat reads a line into f the way the readers use a Scanner: an
// Object of known names, each once; false for anything else.
func readFlat(line []byte, f *flat) bool {
	*f = flat{}
	var s Scanner
	s.Reset(line)
	return s.Object(func(name []byte) (bit uint64, ok bool) {
		switch string(name) {
		case "s":
			f.S, ok = s.String()
			return 1 << 0, ok
		case "t":
			var b []byte
			b, ok = s.Bytes()
			f.T = string(b)
			return 1 << 1, ok
		case "i":
			f.I, ok = s.Int(64)
			return 1 << 2, ok
		case "b":
			var n int64
			n, ok = s.Int(8)
			f.B = int8(n)
			return 1 << 3, ok
		case "u":
			f.U, ok = s.Uint(64)
			return 1 << 4, ok
		case "p":
			if s.Null() {
				return 1 << 5, true
			}
			var n int64
			n, ok = s.Int(64)
			f.P = &n
			return 1 << 5, ok
		}
		return 0, false
	}) && s.End()
}

// fastLines the Scanner must read itself; otherLines it may leave to
// encoding/json, and must when they are not JSON.
var (
	fastLines = []string{
		`{}`, ` { } `, `{"s":"","t":"","i":0,"b":0,"u":0,"p":null}`,
		`{"s":"order:1","i":-9223372036854775808,"b":-128,"u":18446744073709551615,"p":9223372036854775807}`,
		"\t{ \"s\" : \"x\" ,\n\"i\" : -0 }\r\n",
		`{"s":"say \"hi\" \\ \/ \b\f\n\r\t \u0000 \u001f \u003c\u003E\u0026 \u00e9 \u2028 \ufffd","t":"client0-\u003enode0"}`,
		`{"s":"é 日本 😀 ` + "\x7f" + `","t":"\u65e5"}`,
	}
	otherLines = []string{
		`{"s":"\ud83d\ude00"}`, `{"s":"\ud83d"}`, `{"s":"\udc00x"}`, `{"s":"bad ` + "\xff" + `"}`, `{"s":"cut ` + "\xc3" + `"}`,
		`{"s":"\x41"}`, `{"s":"\'"}`, `{"s":"\U0001F600"}`, `{"s":"\u12"}`, `{"s":"\u12g4"}`, `{"s":"\`, `{"s":"x`,
		"{\"s\":\"tab\there\"}", "{\"s\":\"nl\nhere\"}", `{"s":null}`, `{"s":1}`, `{"i":"1"}`,
		`{"i":01}`, `{"i":+1}`, `{"i":1.0}`, `{"i":1e3}`, `{"i":1E3}`, `{"i":-}`, `{"i":9223372036854775808}`,
		`{"b":128}`, `{"u":-1}`, `{"u":-0}`, `{"u":18446744073709551616}`, `{"p":nul}`, `{"p":nullx}`, `{"p":true}`,
		`{"S":"x"}`, `{"\u0073":"x"}`, `{"s` + "\xc3\xa9" + `":"x"}`, `{"s":"x","s":"y"}`, `{"p":1,"p":null}`,
		`{"x":1}`, `{"s":"x",}`, `{"s" "x"}`, `{"s":"x"`, `{"s":"x"}}`, `{"s":"x"} {}`, `[]`, ``, `null`, `{`,
	}
)

// TestScannerAgreesWithEncodingJSON: whatever the Scanner reads, it reads
// as json.Unmarshal does; whatever json.Unmarshal refuses, it refuses;
// and it reads the lines an encoder writes itself.
func TestScannerAgreesWithEncodingJSON(t *testing.T) {
	for _, l := range fastLines {
		if !checkFlat(t, []byte(l)) {
			t.Errorf("%q: left to encoding/json", l)
		}
	}
	for _, l := range otherLines {
		checkFlat(t, []byte(l))
	}
}

func FuzzScanner(f *testing.F) {
	for _, l := range append(fastLines, otherLines...) {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkFlat(t, line) })
}

// checkFlat reports whether the Scanner read line.
func checkFlat(t *testing.T, line []byte) bool {
	t.Helper()
	var got, want flat
	ok, err := readFlat(line, &got), json.Unmarshal(line, &want)
	if ok && err != nil {
		t.Fatalf("%q: the Scanner read %+v, encoding/json refuses it: %v", line, got, err)
	}
	if ok && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: the Scanner read %+v, encoding/json %+v", line, got, want)
	}
	return ok
}

// FuzzScannerInt: every integer strconv writes is read back, and nothing
// is read that encoding/json reads otherwise or refuses.
func FuzzScannerInt(f *testing.F) {
	f.Add(int64(0), "-0")
	f.Add(int64(-1), "18446744073709551615")
	f.Add(int64(1<<62), "01")
	f.Fuzz(func(t *testing.T, n int64, text string) {
		line := []byte(`{"i":` + strconv.FormatInt(n, 10) + `,"u":` + strconv.FormatUint(uint64(n), 10) + `}`)
		if !checkFlat(t, line) {
			t.Fatalf("%s: left to encoding/json", line)
		}
		for _, name := range []string{"i", "b", "u", "p"} {
			checkFlat(t, []byte(`{"`+name+`":`+text+`}`))
		}
	})
}

func BenchmarkScannerString(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"plain", `"94169ca2c268ab31c14299285f6b3923"`},
		{"escaped", `"read tcp 127.0.0.1:54321-\u003e127.0.0.1:6379: i/o timeout \"x\""`},
	} {
		b.Run(c.name, func(b *testing.B) {
			line := []byte(c.s)
			var s Scanner
			b.ReportAllocs()
			for range b.N {
				s.Reset(line)
				if _, ok := s.Bytes(); !ok {
					b.Fatal("not read")
				}
			}
		})
	}
}
