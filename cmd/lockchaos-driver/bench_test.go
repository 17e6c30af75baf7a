package main

import (
	"errors"
	"os"
	"testing"
)

// BenchmarkWriterLines builds and writes (to /dev/null) a grant and an
// error answer.
func BenchmarkWriterLines(b *testing.B) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := &writer{f: f}
	fail := errors.New("read tcp 127.0.0.1:54321->127.0.0.1:6379: i/o timeout")
	b.ReportAllocs()
	for i := range b.N {
		w.granted(int64(i), int64(i), "4f2c0a1b2c3d4e5f60718293a4b5c6d7", uint64(i))
		w.answer(int64(i), fail, nil)
	}
}
