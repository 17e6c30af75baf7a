package jsonl

import (
	"errors"
	"strings"
	"testing"
)

// Check refuses what encoding/json would take in silence and passes
// everything else, syntax errors included (the decoder words those).
func TestCheck(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1,"b":[{"a":1},{"a":2}],"c":{"a":1}}`: "", // the same name in different objects
		`{"a":"\ud83d\ude00","b":"\u00e9\n\\u"}`:    "", // a full pair, other escapes
		`{"a":1,`:                                   "", // a syntax error: the decoder's
		`{"a":1,"a":2}`:                             `name "a" given twice in one object (again, ending at byte 10)`,
		`{"a":1,"A":2}`:                             `name "a" given twice in one object (again as "A"`,
		`{"x":[{"a":1,"b":{"c":1,"c":2}}]}`:         `name "c" given twice`,
		`[{"a":1},{"a":1,"a":1}]`:                   `name "a" given twice`,
		"{\"a\":\"\xff\"}":                          "invalid UTF-8 at byte 6",
		"\xef\xbb\xbf{}":                            "a byte order mark",
		`{"a":"\ud800"}`:                            "escape at byte 6 is half a UTF-16 surrogate pair",
		`{"a":"\udc00\ud800"}`:                      "escape at byte 6 is half",
		`{"a":"\ud800\u0041"}`:                      "escape at byte 6 is half",
	} {
		err := Check([]byte(in))
		switch {
		case want == "" && err != nil:
			t.Errorf("Check(%s) = %v, want nil", in, err)
		case want != "" && (!errors.Is(err, ErrStrict) || !strings.Contains(err.Error(), want)):
			t.Errorf("Check(%s) = %v, want %q", in, err, want)
		}
	}
}
