package drivers

import "testing"

func BenchmarkDecodeMessage(b *testing.B) {
	for _, c := range []struct{ name, line string }{
		{"granted", `{"id":12345,"result":"ok","lease":678,"token":"4f2c0a1b2c3d4e5f60718293a4b5c6d7","fence":12}`},
		{"released", `{"id":12346,"result":"ok"}`},
		{"error", `{"id":12347,"result":"error","error":"read tcp 127.0.0.1:54321-\u003e127.0.0.1:6379: i/o timeout"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			line := []byte(c.line)
			var m message
			b.ReportAllocs()
			for range b.N {
				if err := decodeMessage(line, &m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAppendRequest(b *testing.B) {
	r := request{ID: 12345, Op: "acquire", Key: "order:1", TimeoutMS: 250}
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for range b.N {
		buf = appendRequest(buf[:0], r)
	}
}
