// Package splice writes generated text between two marker lines of a file
// a person also edits (a README's tables): what lies between the markers
// is replaced, and nothing else is touched.
package splice

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrNoMarkers is a file without both markers, the start before the end.
var ErrNoMarkers = errors.New("splice: no table markers")

// Into replaces what lies between start and end in the file at path with
// text.
func Into(path, start, end, text string) error {
	old, i, j, err := find(path, start, end)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(old[:i+len(start)]+"\n"+text+old[j:]), 0o644)
}

// Check says whether Into can write into path: a file with both markers,
// which this process may write. A long run checks it first, so its end
// does not fail on a missing file.
func Check(path, start, end string) error {
	if _, _, _, err := find(path, start, end); err != nil {
		return err
	}
	// Opened for writing, not truncated: nothing changes yet.
	fh, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return fh.Close()
}

// find reads path and finds the markers in it.
func find(path, start, end string) (text string, i, j int, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", 0, 0, err
	}
	text = string(b)
	i, j = strings.Index(text, start), strings.Index(text, end)
	if i < 0 || j < i {
		return "", 0, 0, fmt.Errorf("%w: %s needs a line %q and, after it, a line %q", ErrNoMarkers, path, start, end)
	}
	return text, i, j, nil
}
