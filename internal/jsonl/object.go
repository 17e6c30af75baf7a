package jsonl

// Object reads an object of known fields, the loop every reader of our
// lines shares: field gets each name in turn, reads its value and returns
// the field's bit (a distinct power of two per name it knows; 0 for a name
// it does not). Object reports false for anything a reader must hand to
// encoding/json instead: an unknown name, a name given twice (which
// encoding/json reads as the last one given), a value field could not
// read, and every syntax error. A whole line is an Object, then End.
func (s *Scanner) Object(field func(name []byte) (bit uint64, ok bool)) bool {
	if !s.Eat('{') {
		return false
	}
	if s.Eat('}') {
		return true
	}
	var seen uint64
	for {
		name, ok := s.Key()
		if !ok {
			return false
		}
		bit, ok := field(name)
		if !ok || bit == 0 || seen&bit != 0 {
			return false
		}
		seen |= bit
		if s.Eat(',') {
			continue
		}
		return s.Eat('}')
	}
}

// Array reads an array, calling elem to read each element, or null (no
// element); false as Object.
func (s *Scanner) Array(elem func() bool) bool {
	if s.Null() {
		return true
	}
	if !s.Eat('[') {
		return false
	}
	if s.Eat(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.Eat(']') {
			return true
		}
		if !s.Eat(',') {
			return false
		}
	}
}

// Bool reads true or false.
func (s *Scanner) Bool() (v, ok bool) {
	s.space()
	switch rest := s.b[s.i:]; {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		s.i += 4
		return true, true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		s.i += 5
		return false, true
	}
	return false, false
}
