package jsonl

import (
	"encoding/json"
	"testing"
)

// oddStrings are the strings encoding/json escapes, one way or another,
// and a few it does not.
var oddStrings = []string{
	"", "order:1", "94169ca2c268ab31c14299285f6b3923", `say "hi"`, `back\slash`, "a/b", "tab\there", "nl\n cr\r",
	"\b\f", "nul \x00 \x01 \x1f", "<a&b>", "client0->node0", "é ok", "日本", "\U0001F600", "\ufffd", "\u2028 \u2029",
	"del\x7f", "bad \xff\xfe", "cut \xc3", "surrogate \xed\xa0\x80", "overlong \xc0\xaf",
}

// TestAppendStringIsJSONMarshal: byte for byte what json.Marshal writes,
// after whatever b already held.
func TestAppendStringIsJSONMarshal(t *testing.T) {
	for _, s := range oddStrings {
		checkAppendString(t, s)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range oddStrings {
		f.Add(s)
	}
	f.Fuzz(checkAppendString)
}

// checkAppendString also reads the string back: the Scanner takes
// whatever the appender writes, as encoding/json reads it.
func checkAppendString(t *testing.T, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
		t.Fatalf("%q:\n got %s\nwant x%s", s, got, want)
	}
	var back string
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	var sc Scanner
	sc.Reset(want)
	if got, ok := sc.String(); !ok || !sc.End() || got != back {
		t.Fatalf("%s: the Scanner read %q (ok %v), encoding/json %q", want, got, ok, back)
	}
}

// TestFieldsAreJSONMarshal: a line built from the field appenders is
// what json.Marshal writes for the struct it mirrors.
func TestFieldsAreJSONMarshal(t *testing.T) {
	type rec struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
		Key  string `json:"key,omitempty"`
		N    int64  `json:"n,omitempty"`
		F    uint64 `json:"f"`
		G    uint64 `json:"g,omitempty"`
	}
	for _, r := range []rec{
		{},
		{ID: -1, Name: "<x>", Key: "k\n", N: -9223372036854775808, F: 18446744073709551615, G: 1},
		{ID: 9223372036854775807, Name: "é", N: 7, F: 0, G: 0},
	} {
		want, _ := json.Marshal(r)
		b := Int(nil, `{"id":`, r.ID)
		b = String(b, `,"name":`, r.Name)
		b = StringOmitEmpty(b, `,"key":`, r.Key)
		b = IntOmitEmpty(b, `,"n":`, r.N)
		b = Uint(b, `,"f":`, r.F)
		b = UintOmitEmpty(b, `,"g":`, r.G)
		if b = append(b, '}'); string(b) != string(want) {
			t.Errorf("%+v:\n got %s\nwant %s", r, b, want)
		}
	}
}

func BenchmarkAppendString(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"plain", "94169ca2c268ab31c14299285f6b3923"},
		{"escaped", `read tcp 127.0.0.1:54321->127.0.0.1:6379: i/o timeout "x"`},
	} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 128)
			b.ReportAllocs()
			for range b.N {
				buf = AppendString(buf[:0], c.s)
			}
		})
	}
}
