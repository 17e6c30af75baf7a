// Package clockshim moves a Redis server's wall clock: a tiny LD_PRELOAD
// library of our own (built once per process with the C compiler, kept in
// anonymous memory) makes clock_gettime and gettimeofday add an offset that
// the harness writes into a page of shared memory. libfaketime would do,
// but it deadlocks with Debian's jemalloc redis-server at start.
package clockshim

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/internal/probe"
)

//go:embed src/shim.c
var clockShimSource []byte

var shim struct {
	once sync.Once
	f    *os.File
	err  error
}

// buildTimeout bounds the C compiler's run: the shim is a page of C that
// builds in well under a second, so a compiler silent for a minute (a CC
// wrapper stuck on a lock or a licence server) is killed, with every
// process it started. A variable for the tests.
var buildTimeout = time.Minute

// clockShim builds the LD_PRELOAD library once per process with the C
// compiler and keeps it in anonymous memory (a memfd): nothing is left on
// disk, whatever way the harness ends. The compiler's output file lives
// only for the moment it takes to copy.
func clockShim() (*os.File, error) {
	shim.once.Do(func() {
		cc, who := os.Getenv("CC"), ""
		if cc != "" {
			who = "CC=" + cc
		} else {
			for _, c := range []string{"cc", "gcc", "clang"} {
				if p, err := exec.LookPath(c); err == nil {
					cc, who = p, p
					break
				}
			}
		}
		if cc == "" {
			shim.err = fmt.Errorf("%w: clock faults need a C compiler to build the clock shim (apt-get install gcc, "+
				"or set CC)", backend.ErrNoClockShim)
			return
		}
		shim.f, shim.err = build(cc, who)
	})
	return shim.f, shim.err
}

// build compiles the shim with cc (named who in errors) into a memfd.
func build(cc, who string) (*os.File, error) {
	dir, err := os.MkdirTemp("", "lockchaos-clockshim-")
	if err != nil {
		return nil, fmt.Errorf("clockshim: clock shim: %w", err)
	}
	defer os.RemoveAll(dir)
	backend.TrackDir(dir) // the leak checks look for it after the tests
	src, lib := filepath.Join(dir, "shim.c"), filepath.Join(dir, "shim.so")
	if err := os.WriteFile(src, clockShimSource, 0o600); err != nil {
		return nil, fmt.Errorf("clockshim: clock shim: %w", err)
	}
	// No context reaches here (Supports asks); buildTimeout bounds it.
	args := []string{"-O2", "-shared", "-fPIC", "-o", lib, src, "-ldl"}
	if _, err := probe.CombinedOutput(context.Background(), buildTimeout, who, cc, args...); err != nil {
		return nil, fmt.Errorf("%w: building the clock shim failed: %w", backend.ErrNoClockShim, err)
	}
	b, err := os.ReadFile(lib)
	if err != nil {
		return nil, fmt.Errorf("clockshim: clock shim: %w", err)
	}
	return memFile("lockchaos-clockshim", b, len(b))
}

// Available reports whether clock faults can run here (nil), or
// why not.
func Available() error {
	_, err := clockShim()
	return err
}

// memFile is an anonymous file (memfd) holding b, size bytes long.
func memFile(name string, b []byte, size int) (*os.File, error) {
	// Close-on-exec: only the node it is handed to (ExtraFiles dup2s it
	// without the flag) gets it, not every child the harness starts.
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("clockshim: memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	if err := f.Truncate(int64(size)); err != nil {
		f.Close()
		return nil, fmt.Errorf("clockshim: memfd: %w", err)
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("clockshim: memfd: %w", err)
	}
	return f, nil
}

// Clock is one node's clock offset: a page of shared memory the node's
// shim reads on every wall-clock call and the harness writes.
type Clock struct {
	f   *os.File
	mem []byte
}

// NewClock makes a node's offset page (zero offset), in anonymous memory.
func NewClock(node string) (*Clock, error) {
	f, err := memFile("lockchaos-clock-"+node, nil, 4096)
	if err != nil {
		return nil, err
	}
	return mapClock(f)
}

func mapClock(f *os.File) (*Clock, error) {
	mem, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("clockshim: clock mmap: %w", err)
	}
	return &Clock{f: f, mem: mem}, nil
}

func (c *Clock) word() *int64 { return (*int64)(unsafe.Pointer(&c.mem[0])) }

// Shift moves the clock by d on top of earlier shifts.
func (c *Clock) Shift(d time.Duration) { atomic.AddInt64(c.word(), int64(d)) }

// Offset is the total shift so far.
func (c *Clock) Offset() time.Duration { return time.Duration(atomic.LoadInt64(c.word())) }

// Close unmaps the page.
func (c *Clock) Close() {
	_ = syscall.Munmap(c.mem)
	_ = c.f.Close()
}

// Preload sets cmd up to run under the shim with this clock: the library
// and the offset page are passed as descriptors 3 and 4.
func (c *Clock) Preload(cmd *exec.Cmd) error {
	lib, err := clockShim()
	if err != nil {
		return err
	}
	cmd.ExtraFiles = []*os.File{lib, c.f}
	cmd.Env = append(os.Environ(), "LD_PRELOAD=/proc/self/fd/3", "LOCKCHAOS_CLOCK_FD=4")
	return nil
}

// FileClock is a node's clock offset in a file of its own, for nodes that
// cannot inherit a descriptor: a container maps it through a bind mount
// (the shim reads LOCKCHAOS_CLOCK_FILE). Writes take effect at once, as
// with the memfd a process node gets: both map the same page.
type FileClock struct {
	c    *Clock
	path string
}

// NewFileClock creates the offset file at path (zero offset).
func NewFileClock(path string) (*FileClock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("clockshim: clock file: %w", err)
	}
	if err := f.Truncate(4096); err != nil {
		f.Close()
		return nil, fmt.Errorf("clockshim: clock file: %w", err)
	}
	c, err := mapClock(f)
	if err != nil {
		return nil, err
	}
	return &FileClock{c: c, path: path}, nil
}

// Shift moves the clock by d on top of earlier shifts.
func (fc *FileClock) Shift(d time.Duration) { fc.c.Shift(d) }

// Offset is the total shift so far.
func (fc *FileClock) Offset() time.Duration { return fc.c.Offset() }

// Close unmaps and removes the file.
func (fc *FileClock) Close() error {
	fc.c.Close()
	return os.Remove(fc.path)
}

// WriteShim writes the compiled shim library to path, for a node that
// preloads it from a file (a container's bind mount).
func WriteShim(path string) error {
	lib, err := clockShim()
	if err != nil {
		return err
	}
	st, err := lib.Stat()
	if err != nil {
		return fmt.Errorf("clockshim: clock shim: %w", err)
	}
	b, err := io.ReadAll(io.NewSectionReader(lib, 0, st.Size()))
	if err != nil {
		return fmt.Errorf("clockshim: clock shim: %w", err)
	}
	return os.WriteFile(path, b, 0o755)
}
