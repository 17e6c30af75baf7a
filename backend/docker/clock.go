package docker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/clockshim"
)

// Clock faults on containers: the same LD_PRELOAD shim as for processes
// (faults/clockshim), which the container cannot inherit as a descriptor,
// so the harness writes the library and each node's offset page into a
// folder of its own that every clock container bind-mounts read-only at
// /lockchaos. Both sides map the same page: a shift takes effect at once.
// The folder is named after the harness process (pid and start time): the
// backend removes it on Close, and the next run's sweep removes the folder
// of a run that died without cleaning up, as it does their containers.

const (
	clockMount  = "/lockchaos"
	clockPrefix = "lockchaos-docker-clock-"
)

type clockFiles struct {
	once    sync.Once
	dir     string
	err     error
	janitor func() // removes the folder now; by itself when the harness dies
}

// clockSupported says whether node clocks can move: the shim must build
// here; the image carries the same C library as this machine (make
// redis-image copies it), so the host-built shim loads in the container.
func clockSupported() error { return clockshim.Available() }

// clockDir makes the backend's clock folder with the shim in it, once.
func (b *Backend) clockDir() (string, error) {
	b.clock.once.Do(func() {
		// One folder per backend (a process may have several), named after
		// the owner so the next run's sweep can tell whose it is.
		dir, err := os.MkdirTemp("", clockPrefix+strings.ReplaceAll(b.owner, "/", "-")+"-")
		if err == nil {
			err = os.Chmod(dir, 0o755) // readable by the container's user, whoever it is
		}
		if err != nil {
			b.clock.err = fmt.Errorf("docker: clock folder: %w", err)
			return
		}
		if err := clockshim.WriteShim(filepath.Join(dir, "shim.so")); err != nil {
			os.RemoveAll(dir)
			b.clock.err = err
			return
		}
		b.clock.dir = dir
		b.clock.janitor = backend.Janitor(dir)
	})
	return b.clock.dir, b.clock.err
}

// removeClockDir removes the backend's clock folder, if it made one.
func (b *Backend) removeClockDir() {
	if b.clock.dir != "" {
		_ = os.RemoveAll(b.clock.dir)
	}
	if b.clock.janitor != nil {
		b.clock.janitor()
	}
}

// sweepClockDirs removes clock folders of harness processes that are gone
// (named clockPrefix + pid-start-random).
func sweepClockDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), clockPrefix+"*"))
	for _, d := range dirs {
		f := strings.SplitN(strings.TrimPrefix(filepath.Base(d), clockPrefix), "-", 3)
		if len(f) < 2 || !backend.ProcessAlive(f[0]+"/"+f[1]) {
			_ = os.RemoveAll(d)
		}
	}
}

// clockSetup returns the container environment and bind for a clock node,
// creating its offset file on first use (kept across restarts, as a
// process node keeps its offset).
func (n *Node) clockSetup() (env map[string]string, bind string, err error) {
	dir, err := n.b.clockDir()
	if err != nil {
		return nil, "", err
	}
	name := fmt.Sprintf("%s-%d.clock", n.cfg.Name, n.port)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.clock == nil {
		if n.clock, err = clockshim.NewFileClock(filepath.Join(dir, name)); err != nil {
			return nil, "", err
		}
	}
	return map[string]string{"LD_PRELOAD": clockMount + "/shim.so", "LOCKCHAOS_CLOCK_FILE": clockMount + "/" + name},
		dir + ":" + clockMount + ":ro", nil
}

// ShiftClock implements backend.ClockNode.
func (n *Node) ShiftClock(d time.Duration) error {
	return backend.ShiftClock(&n.mu, &n.clock, n.cfg.Name, d)
}

// ClockOffset implements backend.ClockNode.
func (n *Node) ClockOffset() time.Duration { return backend.ClockOffset(&n.mu, &n.clock) }

var _ backend.ClockNode = (*Node)(nil)
