package drivers

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// tail keeps a driver's stderr: in the cell's folder when there is one,
// and its last lines in memory for errors.
type tail struct {
	mu   sync.Mutex
	f    *os.File
	last []byte
}

func newTail(dir, name string) (*tail, error) {
	t := &tail{}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		t.f = f
	}
	return t, nil
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.last = append(t.last, b...)
	if len(t.last) > 2048 {
		t.last = t.last[len(t.last)-2048:]
	}
	if t.f != nil {
		_, _ = t.f.Write(b)
	}
	return len(b), nil
}

// Last returns the end of what the driver wrote to stderr, quoted.
func (t *tail) Last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.last))
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
	err := t.f.Close()
	t.f = nil
	return err
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// shellLine is the line sh runs. A simple command is exec'd, so the driver
// replaces the shell and the parent-death signal reaches the driver itself
// when the harness dies; a compound one (a pipeline, a list) runs under the
// shell, and its drivers end on their stdin closing, as the protocol says.
func shellLine(command string) string {
	if strings.ContainsAny(command, ";&|()\n`") {
		return command
	}
	return "exec " + command
}
