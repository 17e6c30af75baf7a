package faults

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrNoClockShim is returned when a node's clock cannot be controlled: no
// C compiler to build the shim, or a backend that cannot preload it.
var ErrNoClockShim = errors.New("faults: no clock control")

//go:embed clockshim/shim.c
var clockShimSource []byte

// ClockNode is a node whose wall clock the harness can move.
type ClockNode interface {
	// ShiftClock moves the node's wall clock by d (forward when positive)
	// on top of any earlier shift; it takes effect on its next clock call.
	ShiftClock(d time.Duration) error
	// ClockOffset is the node's total shift so far.
	ClockOffset() time.Duration
}

var shim struct {
	once sync.Once
	f    *os.File
	err  error
}

// clockShim builds the LD_PRELOAD library once per process with the C
// compiler and keeps it in anonymous memory (a memfd): nothing is left on
// disk, whatever way the harness ends. The compiler's output file lives
// only for the moment it takes to copy.
func clockShim() (*os.File, error) {
	shim.once.Do(func() {
		cc := os.Getenv("CC")
		if cc == "" {
			for _, c := range []string{"cc", "gcc", "clang"} {
				if p, err := exec.LookPath(c); err == nil {
					cc = p
					break
				}
			}
		}
		if cc == "" {
			shim.err = fmt.Errorf("%w: clock faults need a C compiler to build the clock shim (apt-get install gcc, or set CC)", ErrNoClockShim)
			return
		}
		dir, err := os.MkdirTemp("", "lockchaos-clockshim-")
		if err != nil {
			shim.err = fmt.Errorf("faults: clock shim: %w", err)
			return
		}
		defer os.RemoveAll(dir)
		trackDir(dir) // the leak checks look for it after the tests
		src, lib := filepath.Join(dir, "shim.c"), filepath.Join(dir, "shim.so")
		if err := os.WriteFile(src, clockShimSource, 0o600); err != nil {
			shim.err = fmt.Errorf("faults: clock shim: %w", err)
			return
		}
		out, err := exec.Command(cc, "-O2", "-shared", "-fPIC", "-o", lib, src, "-ldl").CombinedOutput()
		if err != nil {
			shim.err = fmt.Errorf("%w: building the clock shim with %s failed: %v\n%s", ErrNoClockShim, cc, err, out)
			return
		}
		b, err := os.ReadFile(lib)
		if err != nil {
			shim.err = fmt.Errorf("faults: clock shim: %w", err)
			return
		}
		shim.f, shim.err = memFile("lockchaos-clockshim", b, len(b))
	})
	return shim.f, shim.err
}

// ClockShimAvailable reports whether clock faults can run here (nil), or
// why not.
func ClockShimAvailable() error {
	_, err := clockShim()
	return err
}

// memFile is an anonymous file (memfd) holding b, size bytes long.
func memFile(name string, b []byte, size int) (*os.File, error) {
	// Close-on-exec: only the node it is handed to (ExtraFiles dup2s it
	// without the flag) gets it, not every child the harness starts.
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("faults: memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	if err := f.Truncate(int64(size)); err != nil {
		f.Close()
		return nil, fmt.Errorf("faults: memfd: %w", err)
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("faults: memfd: %w", err)
	}
	return f, nil
}

// clock is one node's clock offset: a page of shared memory the node's
// shim reads on every wall-clock call and the harness writes.
type clock struct {
	f   *os.File
	mem []byte
}

func newClock(node string) (*clock, error) {
	f, err := memFile("lockchaos-clock-"+node, nil, 4096)
	if err != nil {
		return nil, err
	}
	return mapClock(f)
}

func mapClock(f *os.File) (*clock, error) {
	mem, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("faults: clock mmap: %w", err)
	}
	return &clock{f: f, mem: mem}, nil
}

func (c *clock) word() *int64 { return (*int64)(unsafe.Pointer(&c.mem[0])) }

func (c *clock) shift(d time.Duration) { atomic.AddInt64(c.word(), int64(d)) }

func (c *clock) offset() time.Duration { return time.Duration(atomic.LoadInt64(c.word())) }

func (c *clock) close() {
	_ = syscall.Munmap(c.mem)
	_ = c.f.Close()
}

// preload sets cmd up to run under the shim with this clock: the library
// and the offset page are passed as descriptors 3 and 4.
func (c *clock) preload(cmd *exec.Cmd) error {
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
	c    *clock
	path string
}

// NewFileClock creates the offset file at path (zero offset).
func NewFileClock(path string) (*FileClock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("faults: clock file: %w", err)
	}
	if err := f.Truncate(4096); err != nil {
		f.Close()
		return nil, fmt.Errorf("faults: clock file: %w", err)
	}
	c, err := mapClock(f)
	if err != nil {
		return nil, err
	}
	return &FileClock{c: c, path: path}, nil
}

// Shift moves the clock by d on top of earlier shifts.
func (fc *FileClock) Shift(d time.Duration) { fc.c.shift(d) }

// Offset is the total shift so far.
func (fc *FileClock) Offset() time.Duration { return fc.c.offset() }

// Close unmaps and removes the file.
func (fc *FileClock) Close() error {
	fc.c.close()
	return os.Remove(fc.path)
}

// WriteClockShim writes the compiled shim library to path, for a node that
// preloads it from a file (a container's bind mount).
func WriteClockShim(path string) error {
	lib, err := clockShim()
	if err != nil {
		return err
	}
	st, err := lib.Stat()
	if err != nil {
		return fmt.Errorf("faults: clock shim: %w", err)
	}
	b, err := io.ReadAll(io.NewSectionReader(lib, 0, st.Size()))
	if err != nil {
		return fmt.Errorf("faults: clock shim: %w", err)
	}
	return os.WriteFile(path, b, 0o755)
}

// CheckClockMoves makes sure node n really runs under the clock shim: it
// moves n's clock an hour back (back, so no key expires meanwhile), reads
// TIME, and moves it forward again. A node whose clock did not move would
// make every clock fault a silent no-op, so its start fails instead.
func CheckClockMoves(ctx context.Context, n RedisNode) error {
	cn, ok := n.(ClockNode)
	if !ok {
		return fmt.Errorf("%w: node %s cannot move its clock on this backend", ErrNoClockShim, n.Name())
	}
	const probe = -time.Hour
	if err := cn.ShiftClock(probe); err != nil {
		return err
	}
	defer cn.ShiftClock(-probe) //nolint:errcheck // it succeeded a moment ago
	v, err := n.Do(ctx, "TIME")
	if err != nil {
		return err
	}
	parts, _ := v.([]any)
	var sec int64
	if len(parts) == 2 {
		s, _ := parts[0].(string)
		sec, _ = strconv.ParseInt(s, 10, 64)
	}
	if behind := time.Since(time.Unix(sec, 0)); behind < 50*time.Minute {
		return fmt.Errorf("%w: node %s's clock did not move when shifted (TIME %d): the clock shim did not load in it", ErrNoClockShim, n.Name(), sec)
	}
	return nil
}
