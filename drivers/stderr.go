package drivers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/lockchaos/lockchaos/internal/safefile"
)

// stderrName is the file a pod's driver's stderr goes to, in the cell's
// folder: docs/driver-protocol.md names it.
func stderrName(driver string, pod int) string {
	return fmt.Sprintf("driver-%s-pod%d.stderr", driver, pod)
}

// StderrKeep is how much of a pod's driver's stderr its file keeps: the
// last MiB, with a first line saying how much came before it. Without a
// bound, a driver logging every failed retry filled the disk (100 MB a
// pod, eight pods, for one 2 s cell).
const StderrKeep = 1 << 20

// lastKeep is what a tail without a file keeps, for errors (Last).
const lastKeep = 2048

// tail keeps a driver's stderr: in the cell's folder when there is one,
// at most StderrKeep bytes of it, and its end in memory for errors.
//
// The file is written as the driver writes until it reaches StderrKeep;
// past that the end is kept in memory only (at most twice StderrKeep) and
// Close rewrites the file as the count of bytes dropped and the last
// StderrKeep. A harness killed before Close leaves the first StderrKeep
// and a line saying the rest was cut.
type tail struct {
	mu    sync.Mutex
	f     *os.File
	keep  int
	buf   []byte // ends with the last keep bytes written
	total int64  // bytes the driver wrote
	over  bool   // the file stopped at keep bytes
}

func newTail(dir, name string) (*tail, error) {
	t := &tail{keep: lastKeep}
	if dir != "" {
		// Never through a link planted in the cell's folder.
		f, err := safefile.Create(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		t.f, t.keep = f, StderrKeep
	}
	return t, nil
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(b)
	t.total += int64(n)
	if t.f != nil && !t.over {
		if t.total <= int64(t.keep) {
			_, _ = t.f.Write(b)
		} else {
			t.over = true
			_, _ = fmt.Fprintf(t.f, "\n[lockchaos: stderr cut at %d bytes; the file keeps the last %d when the driver ends]\n",
				t.keep, t.keep)
		}
	}
	if len(b) > t.keep {
		b = b[len(b)-t.keep:]
	}
	t.buf = append(t.buf, b...)
	if len(t.buf) > 2*t.keep {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.keep:]...)
	}
	return n, nil
}

// kept is the last keep bytes written.
func (t *tail) kept() []byte {
	return t.buf[max(0, len(t.buf)-t.keep):]
}

// Last returns the end of what the driver wrote to stderr, quoted.
func (t *tail) Last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.kept()
	s := strings.TrimSpace(string(b[max(0, len(b)-lastKeep):]))
	if s == "" {
		return "(empty)"
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strconv.Quote(strings.Join(lines, "\n"))
}

func (t *tail) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f == nil {
		return nil
	}
	var err error
	if t.over {
		err = t.rewrite()
	}
	err = errors.Join(err, t.f.Close())
	t.f = nil
	return err
}

// rewrite makes the file what was dropped and the last keep bytes.
func (t *tail) rewrite() error {
	kept := t.kept()
	head := fmt.Sprintf("[lockchaos: the first %d bytes of this driver's stderr were dropped; the last %d follow]\n",
		t.total-int64(len(kept)), len(kept))
	if err := t.f.Truncate(0); err != nil {
		return err
	}
	_, err := t.f.WriteAt(append([]byte(head), kept...), 0)
	return err
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
