package backend

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// Janitor starts a process that removes dir once this process is gone, by
// whatever end, SIGKILL included: it waits on a pipe only this process
// writes to, which the kernel closes when the process dies (the pipe is
// close-on-exec, so no other child holds it open). It is a grandchild
// left to init (the shell that starts it exits at once): no child of ours
// outlives a cell, as the leak checks require. done sets it off at once.
// Without a shell, done is a no-op and dir stays until someone removes it.
// Keep done reachable for as long as dir must stay: the pipe closes when
// it is collected.
func Janitor(dir string) (done func()) {
	r, w, err := os.Pipe()
	if err != nil {
		return func() {}
	}
	// A second try: a node the kernel is still killing may write a last
	// file while the first one runs.
	cmd := exec.Command("sh", "-c", `( cat <&3 >/dev/null; rm -rf "$0" 2>/dev/null || { sleep 1; rm -rf "$0"; } ) 3<&3 &`, dir)
	cmd.ExtraFiles = []*os.File{r}
	// Its own process group: a Ctrl-C at the terminal reaches the harness,
	// which cleans up itself, and not the janitor.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return func() {}
	}
	_ = cmd.Wait() // the shell; the janitor runs on in the background
	var once sync.Once
	return func() { once.Do(func() { _ = w.Close() }) }
}
