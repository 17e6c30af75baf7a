// Package outdir claims an output directory for lockchaos: made when
// missing; an existing one must be empty or hold earlier lockchaos output,
// so a directory named by mistake (/etc, or a link to it) is never written
// into. Every command that writes an output directory (the CLI's --out)
// claims it here first.
package outdir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockchaos/lockchaos/internal/safefile"
)

// Marker is the file a claimed directory holds: next time, the proof that
// the directory holds lockchaos output and may be written again.
const Marker = ".lockchaos-output"

// ErrForeign is a directory that is neither new, nor empty, nor earlier
// lockchaos output.
var ErrForeign = errors.New("not lockchaos output")

// Claim makes dir an output directory, before anything runs: made when
// missing; an existing one must be empty or hold earlier lockchaos output
// (Marker, or a summary.json lockchaos wrote). The marker is written
// (which checks dir is writable: a run that cannot write its reports has
// nothing to show for its cells), and dir is a safefile root until
// release: no file below it is written through a link. dir itself may be
// a link (the user named it); the rule holds for where it points. Every
// error starts with dir.
func Claim(dir string) (release func(), err error) {
	if dir == "" {
		return nil, errors.New("'': want a directory")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err := holdsOurs(dir); err != nil {
		return nil, err
	}
	release, err = safefile.Protect(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	err = safefile.WriteAtomic(filepath.Join(dir, Marker), func(w io.Writer) error {
		_, err := io.WriteString(w, "This directory holds lockchaos output: lockchaos writes into an existing --out\n"+
			"only when it is empty or holds this file (docs/cli.md: The output directory).\n")
		return err
	})
	if err != nil {
		release()
		return nil, fmt.Errorf("%s: not writable: %w", dir, err)
	}
	return release, nil
}

// holdsOurs says why dir may not be written: it holds entries, none of
// them earlier lockchaos output.
func holdsOurs(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if len(entries) == 0 || isRegular(filepath.Join(dir, Marker)) || ourSummary(filepath.Join(dir, "summary.json")) {
		return nil
	}
	var names []string
	for _, e := range entries[:min(3, len(entries))] {
		names = append(names, e.Name())
	}
	if len(entries) > 3 {
		names = append(names, "...")
	}
	where := dir
	if target, err := os.Readlink(filepath.Clean(dir)); err == nil {
		where = fmt.Sprintf("%s (a link to %s)", dir, target)
	}
	count := fmt.Sprintf("%d entries", len(entries))
	if len(entries) == 1 {
		count = "1 entry"
	}
	return fmt.Errorf("%s: %w: it holds %s (%s) and neither %s nor a summary.json lockchaos wrote; "+
		"lockchaos writes only into a new or empty directory or one it wrote before: choose another --out "+
		"(a new one is made) or empty this one", where, ErrForeign, count, strings.Join(names, ", "), Marker)
}

// isRegular says path is a regular file, not a link to one.
func isRegular(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular()
}

// ourSummary says path is a summary.json lockchaos wrote (an output of
// before the marker): its head names the tool.
func ourSummary(path string) bool {
	if !isRegular(path) {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(f, head)
	return bytes.Contains(head[:n], []byte(`"tool": "lockchaos"`))
}
