package postgres

import (
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/lockchaos/lockchaos/backend"
)

// runDir is this process's folder for the template cluster and the node
// folders, removed by a janitor when the process ends (as backend/process
// does for redis nodes): a harness killed with SIGKILL leaves no data
// folder behind. It is separate from backend/process's run folder so that
// package needs no change, and so it can be opened to the server's user.
var runDir struct {
	once sync.Once
	dir  string
	err  error
	// janitor is kept for the life of the process: its pipe is an
	// os.File, whose finalizer would close it (and set the janitor off)
	// once nothing refers to it.
	janitor func()
}

func parentDir() (string, error) {
	runDir.once.Do(func() {
		runDir.dir, runDir.err = os.MkdirTemp(runDirBase(), fmt.Sprintf("lockchaos-pg-run-%d-", os.Getpid()))
		if runDir.err != nil {
			return
		}
		runDir.janitor = backend.Janitor(runDir.dir)
		if cred, err := serverUser(); err == nil {
			uid := uint32(os.Geteuid())
			if cred != nil {
				uid = cred.Uid
			}
			sweepSegments(uid)
		}
		// As root the server runs as another user, which must pass
		// through (not list) this folder to reach its own.
		runDir.err = os.Chmod(runDir.dir, 0o711)
	})
	return runDir.dir, runDir.err
}

// shmDir is a RAM-backed folder most Linux systems have. Each node copies
// ~20 MB of template cluster: on tmpfs that takes tens of milliseconds,
// on this machine's disk 130 to 600 ms.
const shmDir = "/dev/shm"

// minShmFree is the free space /dev/shm must have to be used (a Docker
// container's default /dev/shm is 64 MB, too small for a few nodes).
const minShmFree = 1 << 30

// runDirBase is where the run folder goes: /dev/shm when it is a tmpfs
// with room and we may write there, else the temp dir ($TMPDIR).
func runDirBase() string {
	var st syscall.Statfs_t
	const tmpfsMagic = 0x01021994
	if err := syscall.Statfs(shmDir, &st); err != nil || st.Type != tmpfsMagic ||
		st.Bavail*uint64(st.Bsize) < minShmFree || syscall.Access(shmDir, 0x2|0x1) != nil {
		return os.TempDir()
	}
	return shmDir
}
