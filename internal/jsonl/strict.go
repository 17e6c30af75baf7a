package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrStrict is wrapped by every error of Check.
var ErrStrict = errors.New("jsonl")

// Check reports what encoding/json lets through but a line of ours must
// not hold: a byte order mark before the value, invalid UTF-8 (which
// encoding/json turns into U+FFFD without a word), a \u escape of half a
// surrogate pair (the same), and a name given twice in one object
// (encoding/json keeps the last; names equal but for case count as the
// same, as encoding/json matches them so). Syntax errors are left to the
// decoder that follows, which words them. Errors say the byte offset.
func Check(b []byte) error {
	if bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
		return fmt.Errorf("%w: a byte order mark (U+FEFF) before the JSON value", ErrStrict)
	}
	if i := invalidUTF8(b); i >= 0 {
		return fmt.Errorf("%w: invalid UTF-8 at byte %d", ErrStrict, i)
	}
	if i := loneSurrogate(b); i >= 0 {
		return fmt.Errorf("%w: \\u escape at byte %d is half a UTF-16 surrogate pair (no character)", ErrStrict, i)
	}
	return duplicateNames(b)
}

// invalidUTF8 returns the offset of b's first byte that is no UTF-8, or -1.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// loneSurrogate returns the offset of the first \u escape that is a
// surrogate without its pair, or -1. A backslash outside a string is a
// syntax error the decoder reports, so strings need not be tracked.
func loneSurrogate(b []byte) int {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := escapedRune(b, i)
		if !ok {
			i++ // \" \\ \n ...: skip the escaped byte
			continue
		}
		switch {
		case utf16.IsSurrogate(r) && r < 0xdc00:
			if low, ok := escapedRune(b, i+6); ok && utf16.DecodeRune(r, low) != utf8.RuneError {
				i += 11
				continue
			}
			return i
		case utf16.IsSurrogate(r):
			return i
		}
		i += 5
	}
	return -1
}

// escapedRune reads a \uXXXX escape at b[i:].
func escapedRune(b []byte, i int) (rune, bool) {
	if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return 0, false
	}
	var s Scanner
	s.Reset(b[i+2 : i+6])
	return s.hex4()
}

// duplicateNames walks b's tokens and reports a name given twice in one
// object, at any depth. A syntax error ends the walk quietly: the decoder
// reports it.
func duplicateNames(b []byte) error {
	type frame struct {
		names     map[string]string // folded name -> as given; nil for an array
		expectKey bool
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var stack []*frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].names != nil {
			stack[n-1].expectKey = true
		}
	}
	for {
		t, err := d.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return nil // the decoder words it
		}
		top := (*frame)(nil)
		if n := len(stack); n > 0 {
			top = stack[n-1]
		}
		if name, ok := t.(string); ok && top != nil && top.expectKey {
			folded := strings.ToLower(name)
			if first, dup := top.names[folded]; dup {
				also := ""
				if first != name {
					also = fmt.Sprintf(" as %q", name)
				}
				return fmt.Errorf("%w: name %q given twice in one object (again%s, ending at byte %d)", ErrStrict, first, also,
					d.InputOffset())
			}
			top.names[folded] = name
			top.expectKey = false
			continue
		}
		switch t {
		case json.Delim('{'):
			stack = append(stack, &frame{names: map[string]string{}, expectKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

// Names returns the names of the object b's top level (nil when b is no
// object): which fields a line gave, where a zero given means something
// else than one left out.
func Names(b []byte) map[string]bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}
