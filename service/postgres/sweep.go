package postgres

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// A server killed with its harness (SIGKILL: Pdeathsig kills the
// postmaster, a janitor removes its folder) leaves its System V
// interlock segment behind, which only a reboot would free: the segment
// a normal Kill removes (clearStale) nobody names any more. sweepSegments
// removes such leftovers at the first node of the next run, as the
// docker backend sweeps a killed run's containers.

// interlockSize is the size of PostgreSQL's System V segment (its
// PGShmemHeader; the rest of its shared memory is mapped anonymously).
const interlockSize = 56

// sweepSegments removes every System V segment that is a PostgreSQL
// interlock (its size), owned by uid, attached by nobody, whose creator
// is gone: a server of this user that is still running keeps its
// postmaster attached, so it is never touched. It returns how many it
// removed.
func sweepSegments(uid uint32) int {
	f, err := os.Open("/proc/sysvipc/shm")
	if err != nil {
		return 0
	}
	defer f.Close()
	removed := 0
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		// key shmid perms size cpid lpid nattch uid ...
		fs := strings.Fields(sc.Text())
		if len(fs) < 8 {
			continue
		}
		id, _ := strconv.Atoi(fs[1])
		size, _ := strconv.Atoi(fs[3])
		cpid, _ := strconv.Atoi(fs[4])
		nattch, _ := strconv.Atoi(fs[6])
		owner, _ := strconv.ParseUint(fs[7], 10, 32)
		if size != interlockSize || nattch != 0 || owner != uint64(uid) || alive(cpid) {
			continue
		}
		const ipcRMID = 0
		if _, _, e := syscall.Syscall(syscall.SYS_SHMCTL, uintptr(id), ipcRMID, 0); e == 0 {
			removed++
		}
	}
	return removed
}

// alive reports whether a process pid exists.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}
