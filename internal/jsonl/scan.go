package jsonl

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Scanner reads the values of one line in order, for a reader of flat
// objects of known fields. Every method skips the whitespace before what
// it reads, and reports false for anything it does not read exactly as
// encoding/json would: a reader then hands the whole line to encoding/json,
// which decides (and words the error). That is the fall-back rule, and
// what the Scanner takes is what an encoder writes: strings of valid UTF-8
// with JSON's escapes, integers without fraction or exponent, null. It
// leaves to encoding/json invalid UTF-8 and \u escapes of surrogates
// (which encoding/json replaces by U+FFFD or pairs), numbers with a
// fraction or an exponent, and all JSON's syntax errors. After a false the
// position is undefined.
//
// Field names are a reader's business: Key hands back the name's bytes
// for the reader to compare with the names it knows, anything else being
// left to encoding/json (which also matches names without regard to
// case). So is a field given twice, which encoding/json reads as the last
// one given.
type Scanner struct {
	b   []byte
	i   int
	buf []byte // the decoded text of the last string with escapes
}

// Reset starts reading line from its beginning.
func (s *Scanner) Reset(line []byte) { s.b, s.i = line, 0 }

func (s *Scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// Eat consumes c if it comes next.
func (s *Scanner) Eat(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// End reports whether nothing but whitespace is left.
func (s *Scanner) End() bool {
	s.space()
	return s.i == len(s.b)
}

// Null consumes null if it comes next.
func (s *Scanner) Null() bool {
	s.space()
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// Key reads a field's name and the colon after it. The name is the
// string's bytes, not copied (compare them with switch string(name),
// which allocates nothing); false for a name with escapes or non-ASCII
// bytes (no known name has them), left to encoding/json.
func (s *Scanner) Key() ([]byte, bool) {
	if !s.Eat('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			name := s.b[start:s.i]
			s.i++
			return name, s.Eat(':')
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// Bytes reads a string and returns its text: the line's own bytes when
// the string has no escapes, else its decoded text in a buffer the next
// string with escapes reuses. Either way it is valid until the line or
// the next call changes it; convert it with string() to keep it.
func (s *Scanner) Bytes() ([]byte, bool) {
	if !s.Eat('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c == '\\':
			return s.unescape(start)
		case c < 0x20:
			return nil, false
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n == 1 {
				return nil, false
			}
			s.i += n
		}
	}
	return nil, false
}

// unescape reads the rest of a string from its first backslash, decoding
// into s.buf the string that began at start.
func (s *Scanner) unescape(start int) ([]byte, bool) {
	// b reuses s.buf's memory and is kept back into it once the string
	// ends, so a line's strings cost no allocation after the first.
	b := s.buf[:0]
	b = append(b, s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			s.buf = b
			return b, true
		case c == '\\':
			if s.i+1 == len(s.b) {
				return nil, false
			}
			e := s.b[s.i+1]
			s.i += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := s.hex4()
				if !ok || utf16.IsSurrogate(r) {
					return nil, false
				}
				b = utf8.AppendRune(b, r)
			default:
				return nil, false
			}
		case c < 0x20:
			return nil, false
		case c < utf8.RuneSelf:
			b = append(b, c)
			s.i++
		default:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n == 1 {
				return nil, false
			}
			b = append(b, s.b[s.i:s.i+n]...)
			s.i += n
		}
	}
	return nil, false
}

// hex4 reads the four hex digits of a \u escape.
func (s *Scanner) hex4() (rune, bool) {
	if len(s.b)-s.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	s.i += 4
	return r, true
}

// String reads a string, copied.
func (s *Scanner) String() (string, bool) {
	b, ok := s.Bytes()
	return string(b), ok
}

// digits reads a JSON integer's text: an optional minus (if minus allows
// it), then 0 or a digit 1-9 and more digits; no fraction or exponent.
// abs is the value of its digits, computed on the way (a loader's hot
// path: op ids, times, values, several per line), exact when they are at
// most maxSmall (no int64 of that many overflows), meaningless beyond.
func (s *Scanner) digits(minus bool) (d []byte, abs int64, ok bool) {
	s.space()
	start := s.i
	if minus && s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	first := s.i
	for s.i < len(s.b) {
		c := s.b[s.i] - '0'
		if c > 9 {
			break
		}
		abs = abs*10 + int64(c)
		s.i++
	}
	n := s.i - first
	if n == 0 || (n > 1 && s.b[first] == '0') {
		return nil, 0, false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return nil, 0, false
	}
	return s.b[start:s.i], abs, true
}

// Int reads an integer that fits in a signed integer of bits bits.
func (s *Scanner) Int(bits int) (int64, bool) {
	d, abs, ok := s.digits(true)
	if !ok {
		return 0, false
	}
	// Up to maxSmall digits, abs is exact: no strconv.
	if neg := d[0] == '-'; bits == 64 && len(d)-b2i(neg) <= maxSmall {
		if neg {
			return -abs, true
		}
		return abs, true
	}
	n, err := strconv.ParseInt(string(d), 10, bits)
	return n, err == nil
}

// maxSmall is the most digits digits' value is exact for: 10^18-1 fits
// in an int64.
const maxSmall = 18

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Uint reads an integer that fits in an unsigned integer of bits bits
// (no minus sign, as encoding/json refuses -0 for one).
func (s *Scanner) Uint(bits int) (uint64, bool) {
	d, abs, ok := s.digits(false)
	if !ok {
		return 0, false
	}
	if len(d) <= maxSmall && bits == 64 {
		return uint64(abs), true
	}
	n, err := strconv.ParseUint(string(d), 10, bits)
	return n, err == nil
}
