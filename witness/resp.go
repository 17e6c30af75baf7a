package witness

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// A RESP3 reader and writer, just what the witness speaks: one
// connection carries both the keyspace notifications (push frames) and
// the replies to its reads, in the order the server produced them. That
// order is why the witness speaks RESP3 on one connection instead of
// RESP2 on two (a subscribed RESP2 connection cannot send GET): a read's
// reply arrives after every notification the server sent before running
// it, so the witness knows whether the value it read is the one the
// notification announced or a later one.

// errProtocol is a frame the reader does not understand.
var errProtocol = errors.New("witness: RESP protocol error")

// frame is one RESP3 value: a push is a frame with push set.
type frame struct {
	push  bool
	err   string // "-" and "!" frames
	str   string // simple, bulk, verbatim, number as text
	null  bool
	int   int64
	items []frame // arrays, sets, pushes; maps as key, value, key, value
}

// readFrame reads one value.
func readFrame(r *bufio.Reader) (frame, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return frame{}, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return frame{}, fmt.Errorf("%w: line %q", errProtocol, line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return frame{str: body}, nil
	case '-':
		return frame{err: body}, nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return frame{}, fmt.Errorf("%w: integer %q", errProtocol, body)
		}
		return frame{int: n, str: body}, nil
	case '_':
		return frame{null: true}, nil
	case '#', ',', '(':
		return frame{str: body}, nil
	case '$', '=', '!':
		return readBlob(r, kind, body)
	case '*', '~', '>', '%', '|':
		return readAggregate(r, kind, body)
	}
	return frame{}, fmt.Errorf("%w: type %q", errProtocol, kind)
}

// readBlob reads the rest of a length-prefixed frame: a bulk string, a
// verbatim string (its "txt:" dropped) or a bulk error.
func readBlob(r *bufio.Reader, kind byte, body string) (frame, error) {
	n, err := strconv.Atoi(body)
	if err != nil {
		return frame{}, fmt.Errorf("%w: length %q", errProtocol, body)
	}
	if n < 0 {
		return frame{null: true}, nil
	}
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(r, buf); err != nil {
		return frame{}, err
	}
	s := string(buf[:n])
	if kind == '=' && len(s) >= 4 {
		s = s[4:] // "txt:" and the like
	}
	if kind == '!' {
		return frame{err: s}, nil
	}
	return frame{str: s}, nil
}

// readAggregate reads the items of an array, set, push or map (a map's
// keys and values in turn); an attribute is read and skipped.
func readAggregate(r *bufio.Reader, kind byte, body string) (frame, error) {
	n, err := strconv.Atoi(body)
	if err != nil {
		return frame{}, fmt.Errorf("%w: count %q", errProtocol, body)
	}
	if n < 0 {
		return frame{null: true}, nil
	}
	if kind == '%' || kind == '|' {
		n *= 2
	}
	f := frame{push: kind == '>', items: make([]frame, 0, n)}
	for range n {
		it, err := readFrame(r)
		if err != nil {
			return frame{}, err
		}
		f.items = append(f.items, it)
	}
	if kind == '|' {
		// An attribute describes the next value: skip it.
		return readFrame(r)
	}
	return f, nil
}

// appendCommand appends args as a RESP array of bulk strings.
func appendCommand(b []byte, args ...string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// globEscape quotes the characters PSUBSCRIBE's pattern treats as
// special, so a key prefix matches only itself.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
