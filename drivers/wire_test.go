package drivers

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

var wireLines = []string{
	`{"hello": "lockchaos-driver", "version": 1, "name": "redis-py Lock"}`,
	`{"hello":"lockchaos-driver","version":1,"name":"lockchaos token"}`,
	`{"hello":"lockchaos-driver","version":9}`,
	`{"id":1,"result":"ok","lease":7,"token":"4f2c0a1b2c3d4e5f60718293a4b5c6d7","fence":12}`,
	`{"fence":0,"id":12345,"lease":12345,"result":"ok","token":"4f2c"}`,
	`{"id":1,"result":"ok","lease":0}`,
	`{"id": 2, "result": "refused"}`,
	`{"id":3,"result":"error","error":"timeout reading from socket <10.0.0.1:6379> & more"}`,
	`{"id":3,"result":"error","error":"Error 111 connecting to 127.0.0.1:4000. Connection refused."}`,
	`{"lost": 7}`,
	`	{ "lost" : -7 } `,
	`{}`,
	`{"id":4,"result":"error","error":"line\nbreak \"quoted\" \u00e9"}`,
	`{"id":5,"result":"error","error":"é"}`,
	`{"id":6,"result":"error","error":"read tcp 127.0.0.1:54321-\u003e127.0.0.1:6379: i/o timeout"}`,
	// What encoding/json decides: invalid UTF-8, escaped keys, surrogate
	// escapes, null, other cases, duplicates, unknown keys, non-integers,
	// overflows, garbage.
	`{"id":5,"result":"error","error":"bad utf-8 ` + "\xff" + `"}`,
	`{"i\u0064":6,"result":"ok"}`,
	`{"id":6,"result":"error","error":"\ud83d\ude00"}`,
	`{"ID":6,"Result":"ok"}`,
	`{"id":6,"id":7,"result":"ok"}`,
	`{"id":null,"lost":8}`,
	`{"id":1,"result":"ok","lease":null}`,
	`{"id":6,"result":"ok","extra":{"a":[1,2]}}`,
	`{"id":1.0,"result":"ok"}`,
	`{"id":1e3,"result":"ok"}`,
	`{"id":01,"result":"ok"}`,
	`{"id":-0,"result":"ok"}`,
	`{"id":+1,"result":"ok"}`,
	`{"id":"1","result":"ok"}`,
	`{"id":9223372036854775808,"result":"ok"}`,
	`{"id":1,"result":"ok","fence":-1}`,
	`{"id":1,"result":"ok","fence":18446744073709551615}`,
	`{"id":1,"result":"ok","fence":18446744073709551616}`,
	`{"id":1,"result":ok}`,
	`{"id":1,"result":"ok"} trailing`,
	`{"id":1,"result":"ok",}`,
	`{"id":1 "result":"ok"}`,
	`{"id":1,"result":"ok"`,
	`{"id":1,"result":"ok`,
	`[1,2]`,
	`this is not json`,
	``,
	`{"version":99999999999999999999}`,
}

// TestDecodeMessageIsJSONUnmarshal: the fast decoder agrees with
// json.Unmarshal on every line, and takes the common shapes itself.
func TestDecodeMessageIsJSONUnmarshal(t *testing.T) {
	for _, l := range wireLines {
		checkDecode(t, []byte(l))
	}
	for _, l := range wireLines[:15] {
		var m message
		if !fastMessage([]byte(l), &m) {
			t.Errorf("%q: not decoded by the fast path", l)
		}
	}
}

func FuzzDecodeMessage(f *testing.F) {
	for _, l := range wireLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkDecode(t, line) })
}

func checkDecode(t *testing.T, line []byte) {
	t.Helper()
	var got, want message
	gotErr, wantErr := decodeMessage(line, &got), json.Unmarshal(line, &want)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%q: decodeMessage error %v, json.Unmarshal error %v", line, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: decodeMessage %s, json.Unmarshal %s", line, show(got), show(want))
	}
}

func show(m message) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// TestAppendRequestIsJSONMarshal: requests are byte for byte what
// encoding/json writes.
func TestAppendRequestIsJSONMarshal(t *testing.T) {
	for _, r := range []request{
		{ID: 1, Op: "acquire", Key: "order:1", TimeoutMS: 250},
		{ID: 2, Op: "release", Key: "order:1", Lease: ref(7), TimeoutMS: 1000},
		{ID: 3, Op: "release", Lease: ref(-1)},
		{ID: 4, Op: "release", Key: "order:1", Lease: ref(0), TimeoutMS: 1},
		{ID: -4, Op: "acquire", Key: `odd "key" \ <tag> & é ` + "\x00\n\xff\u2028"},
		{},
	} {
		checkRequest(t, r)
	}
}

func FuzzAppendRequest(f *testing.F) {
	f.Add(int64(1), "acquire", "order:1", int64(0), int64(250))
	f.Add(int64(2), "release", "k\"\\<\xff", int64(7), int64(0))
	f.Fuzz(func(t *testing.T, id int64, op, key string, lease, timeout int64) {
		checkRequest(t, request{ID: id, Op: op, Key: key, Lease: &lease, TimeoutMS: timeout})
		checkRequest(t, request{ID: id, Op: op, Key: key, TimeoutMS: timeout})
	})
}

func ref(n int64) *int64 { return &n }

func checkRequest(t *testing.T, r request) {
	t.Helper()
	want, _ := json.Marshal(r)
	want = append(want, '\n')
	if got := appendRequest(nil, r); !bytes.Equal(got, want) {
		t.Fatalf("%+v:\n got %s\nwant %s", r, got, want)
	}
}
