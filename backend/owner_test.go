package backend

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A leftover's owner is alive only as the very process that wrote it: a
// reused pid (another start time), an ended process or a label that does
// not parse are gone.
func TestProcessAliveKnowsAReusedPid(t *testing.T) {
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{
		ProcessID():                           true,
		fmt.Sprintf("%d/0", os.Getpid()):      false, // our pid, another start time
		fmt.Sprintf("%d/", ended.Process.Pid): false,
		"":                                    false,
		"x/1":                                 false,
		"-1/1":                                false,
	} {
		if got := ProcessAlive(id); got != want {
			t.Errorf("ProcessAlive(%q) = %v, want %v", id, got, want)
		}
	}
	if s := PIDSpace(); !strings.Contains(s, "/pid:[") {
		t.Errorf("PIDSpace() = %q, want host/pid:[inode]", s)
	}
}
