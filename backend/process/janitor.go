package process

import (
	"fmt"
	"os"
	"sync"

	"github.com/lockchaos/lockchaos/backend"
)

// runDir is this process's folder for node folders, removed by a janitor
// when the process ends: a harness killed with SIGKILL leaves no node
// folder (AOF, sentinel.conf, log) behind.
var runDir struct {
	once sync.Once
	dir  string
	err  error
	// janitor is kept for the life of the process: its pipe is an os.File,
	// whose finalizer would close it (and set the janitor off) once
	// nothing refers to it.
	janitor func()
}

func nodeParentDir() (string, error) {
	runDir.once.Do(func() {
		runDir.dir, runDir.err = os.MkdirTemp("", fmt.Sprintf("lockchaos-run-%d-", os.Getpid()))
		if runDir.err == nil {
			runDir.janitor = backend.Janitor(runDir.dir)
		}
	})
	return runDir.dir, runDir.err
}
