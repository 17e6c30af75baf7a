package drivers

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// stderrName is the file a pod's driver's stderr goes to, in the cell's
// folder: docs/driver-protocol.md names it.
func stderrName(driver string, pod int) string {
	return fmt.Sprintf("driver-%s-pod%d.stderr", driver, pod)
}

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
