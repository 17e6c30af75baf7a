// Package safefile creates the files lockchaos writes under an output
// directory without ever writing through a link it did not make.
//
// A directory is made an output root once (Protect: the CLI's --out).
// Below it, every directory on the way to a file is opened one element at
// a time from the root, relative to its parent's descriptor, with
// O_NOFOLLOW: a symbolic link where a directory should be is refused
// (ErrLink, naming the link and its target), never followed, and no
// element can be swapped for a link between a check and its use. A link
// (or an earlier file) at the file's own name is removed, the link itself
// and never its target, and the file is created in its place with
// O_EXCL|O_NOFOLLOW: the same as the atomic writers' rename does. The root
// itself may be a link: it is the path the user named.
//
// A path under no root (a user's own go test writing into t.TempDir) gets
// the last part alone: its directories are made as os.MkdirAll makes them,
// and a link at the file's name is replaced, not followed.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/lockchaos/lockchaos/internal/safename"
)

var (
	// ErrLink is a symbolic link below an output root where a directory
	// should be.
	ErrLink = errors.New("safefile: symbolic link refused")
	// ErrNotDir is something other than a directory where one should be.
	ErrNotDir = errors.New("safefile: not a directory")
)

// roots are the output roots, absolute and clean, for the life of the
// process (or until released): declared once by the command that owns
// the output directory, they hold for every package that writes below it
// without each one being handed the root.
var roots struct {
	sync.Mutex
	dirs []string
}

// Protect makes dir an output root until release is called. dir must be a
// directory (it may be reached through links: the user named it).
func Protect(dir string) (release func(), err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s", ErrNotDir, dir)
	}
	roots.Lock()
	roots.dirs = append(roots.dirs, abs)
	roots.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			roots.Lock()
			defer roots.Unlock()
			if i := slices.Index(roots.dirs, abs); i >= 0 {
				roots.dirs = slices.Delete(roots.dirs, i, i+1)
			}
		})
	}, nil
}

// rootOf is the deepest output root abs lies in, or "".
func rootOf(abs string) string {
	roots.Lock()
	defer roots.Unlock()
	best := ""
	for _, r := range roots.dirs {
		if safename.Within(r, abs) && len(r) > len(best) {
			best = r
		}
	}
	return best
}

// MkdirAll makes dir and every missing directory above it up to its
// root, refusing a link below the root.
func MkdirAll(dir string) error {
	fd, err := openDir(dir, true)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// Create creates the file at path for writing (0644 before the umask),
// making its directories: whatever was at path is removed first (a
// link itself, never its target; a directory there is an error).
func Create(path string) (*os.File, error) {
	return inDir(path, func(dir int, name string) (*os.File, error) {
		if err := unlinkAt(dir, name, path); err != nil {
			return nil, err
		}
		return createAt(dir, name, path, 0)
	})
}

// Append opens the file at path for appending, creating it (and its
// directories) when missing. A link at path, symbolic or hard, is
// replaced by a new file, as Create replaces it: appending would write
// into the file the link names.
func Append(path string) (*os.File, error) {
	return inDir(path, func(dir int, name string) (*os.File, error) {
		fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if err == nil {
			var st unix.Stat_t
			err = unix.Fstat(fd, &st)
			if err == nil && st.Nlink <= 1 {
				return os.NewFile(uintptr(fd), path), nil
			}
			_ = unix.Close(fd)
			if err != nil {
				return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
			}
		} else if !errors.Is(err, unix.ELOOP) {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		if err := unlinkAt(dir, name, path); err != nil {
			return nil, err
		}
		return createAt(dir, name, path, unix.O_APPEND)
	})
}

// WriteAtomic writes the file at path through a new temporary file beside
// it and a rename, so a reader (or a crash) never sees half of it; the
// rename replaces a link at path, never writing through it.
func WriteAtomic(path string, write func(io.Writer) error) error {
	dir, err := openDir(filepath.Dir(path), true)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(dir) }()
	name := filepath.Base(path)
	var tmp string
	var f *os.File
	for range 100 {
		tmp = fmt.Sprintf(".tmp-%s-%d", name, rand.Uint32())
		if f, err = createAt(dir, tmp, filepath.Join(filepath.Dir(path), tmp), 0); !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	// Reports are for everyone to read, whatever the umask.
	err = f.Chmod(0o644)
	if err == nil {
		err = write(f)
	}
	err = errors.Join(err, f.Close())
	if err == nil {
		if err = unix.Renameat(dir, tmp, dir, name); err != nil {
			err = &fs.PathError{Op: "rename", Path: path, Err: err}
		}
	}
	if err != nil {
		_ = unix.Unlinkat(dir, tmp, 0)
	}
	return err
}

// Remove removes the file (or link) at path, if any, without following a
// link on the way to it; it makes no directory.
func Remove(path string) error {
	err := withDir(path, false, func(dir int, name string) error { return unlinkAt(dir, name, path) })
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func inDir(path string, open func(dir int, name string) (*os.File, error)) (f *os.File, err error) {
	err = withDir(path, true, func(dir int, name string) error {
		f, err = open(dir, name)
		return err
	})
	return f, err
}

func withDir(path string, mk bool, fn func(dir int, name string) error) error {
	name := filepath.Base(path)
	if name == "." || name == ".." || name == string(filepath.Separator) {
		return &fs.PathError{Op: "create", Path: path, Err: fs.ErrInvalid}
	}
	dir, err := openDir(filepath.Dir(path), mk)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(dir) }()
	return fn(dir, name)
}

// createAt creates name in dir, failing if anything is there.
func createAt(dir int, name, path string, flag int) (*os.File, error) {
	fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC|flag, 0o644)
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// unlinkAt removes name from dir unless it is missing: a directory there
// stays, and is an error.
func unlinkAt(dir int, name, path string) error {
	err := unix.Unlinkat(dir, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	return &fs.PathError{Op: "remove", Path: path, Err: err}
}

// openDir opens dir, making what is missing (mk): below its root one
// element at a time, refusing links; under no root, as os.MkdirAll does.
func openDir(dir string, mk bool) (int, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return -1, err
	}
	root := rootOf(abs)
	if root == "" {
		if mk {
			if err := os.MkdirAll(abs, 0o755); err != nil {
				return -1, err
			}
		}
		root = abs
	}
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	rel, _ := filepath.Rel(root, abs)
	if rel == "." {
		return fd, nil
	}
	at := root
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		at = filepath.Join(at, name)
		next, err := stepDir(fd, name, at, root, mk)
		_ = unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// stepDir opens the directory name in parent (at is its path), making it
// when missing (mk); a link there is refused, never followed.
func stepDir(parent int, name, at, root string, mk bool) (int, error) {
	for range 3 {
		fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.ENOENT) && !mk:
			return -1, &fs.PathError{Op: "open", Path: at, Err: err}
		case errors.Is(err, unix.ENOENT):
			// Made here, or by a concurrent writer of the same folder.
			if err := unix.Mkdirat(parent, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
				return -1, &fs.PathError{Op: "mkdir", Path: at, Err: err}
			}
		case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
			return -1, refused(parent, name, at, root)
		default:
			return -1, &fs.PathError{Op: "open", Path: at, Err: err}
		}
	}
	return -1, &fs.PathError{Op: "open", Path: at, Err: unix.ENOENT}
}

// refused says what stands where a directory should be.
func refused(parent int, name, at, root string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		buf := make([]byte, 4096)
		target := "?"
		if n, err := unix.Readlinkat(parent, name, buf); err == nil {
			target = string(buf[:n])
		}
		return fmt.Errorf("%w: %s is a symbolic link (to %s) below the output directory %s, "+
			"and lockchaos never writes through a link it did not make: remove the link", ErrLink, at, target, root)
	}
	return fmt.Errorf("%w: %s (below the output directory %s) is a file where lockchaos makes a directory: remove it",
		ErrNotDir, at, root)
}
