// Package jsonl holds the pieces of lockchaos' hand-written JSON lines:
// the appenders that build a line byte for byte as encoding/json would
// marshal it, and the Scanner the fast readers use on the lines they
// expect, handing every other line to encoding/json.
//
// Two line formats are built on it: history files (package history) and
// the driver protocol (package drivers and cmd/lockchaos-driver). Both are
// written a line per lock call and read as fast as the disk or the pipe
// gives them, where encoding/json's reflection would cost microseconds a
// line; neither may mean anything encoding/json would not make of it.
package jsonl

import (
	"strconv"
	"unicode/utf8"
)

// AppendString appends s as a JSON string exactly as encoding/json
// marshals it: <, > and & escaped as \u003c, \u003e and \u0026 (its HTML
// escaping), control characters as \b, \f, \n, \r, \t or \u00XX, U+2028
// and U+2029 as \u2028 and \u2029, and each byte of invalid UTF-8 as
// \ufffd. Everything else is copied as it is.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default: // the other control characters, <, > and &
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(append(b, s[start:i]...), `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xf])
		} else {
			i += n
			continue
		}
		i += n
		start = i
	}
	return append(append(b, s[start:]...), '"')
}

const hex = "0123456789abcdef"

// safe holds the ASCII bytes encoding/json writes as they are.
var safe = func() (t [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// The field appenders append a name, then a value. The name is written
// as it is, separator and colon included (`{"id":`, `,"lease":`), so it is
// a constant and costs a copy. The OmitEmpty forms write nothing for a
// zero value, as the omitempty option does.

// String appends name and s as a JSON string.
func String(b []byte, name, s string) []byte {
	return AppendString(append(b, name...), s)
}

// StringOmitEmpty appends name and s, or nothing when s is "".
func StringOmitEmpty(b []byte, name, s string) []byte {
	if s != "" {
		b = AppendString(append(b, name...), s)
	}
	return b
}

// Int appends name and n.
func Int(b []byte, name string, n int64) []byte {
	return strconv.AppendInt(append(b, name...), n, 10)
}

// IntOmitEmpty appends name and n, or nothing when n is 0.
func IntOmitEmpty(b []byte, name string, n int64) []byte {
	if n != 0 {
		b = strconv.AppendInt(append(b, name...), n, 10)
	}
	return b
}

// Uint appends name and n.
func Uint(b []byte, name string, n uint64) []byte {
	return strconv.AppendUint(append(b, name...), n, 10)
}

// UintOmitEmpty appends name and n, or nothing when n is 0.
func UintOmitEmpty(b []byte, name string, n uint64) []byte {
	if n != 0 {
		b = strconv.AppendUint(append(b, name...), n, 10)
	}
	return b
}

// BoolOmitEmpty appends name and true, or nothing when v is false.
func BoolOmitEmpty(b []byte, name string, v bool) []byte {
	if v {
		b = append(append(b, name...), "true"...)
	}
	return b
}

// Strings appends name and ss as a JSON array, or nothing when ss is
// empty (omitempty).
func Strings(b []byte, name string, ss []string) []byte {
	if len(ss) == 0 {
		return b
	}
	b = append(append(b, name...), '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, s)
	}
	return append(b, ']')
}

// Ints appends name and ns as a JSON array, or nothing when ns is empty
// (omitempty).
func Ints(b []byte, name string, ns []int) []byte {
	if len(ns) == 0 {
		return b
	}
	b = append(append(b, name...), '[')
	for i, n := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, ']')
}
