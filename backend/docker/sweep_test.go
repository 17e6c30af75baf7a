package docker_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/docker"
)

// SweepLeftovers needs no Backend (a run on any backend calls it): it
// removes the containers of lockchaos processes of this pid space that are
// gone, and keeps a live one's and another pid space's.
func TestSweepLeftoversRemovesOnlyGoneOwnersContainers(t *testing.T) {
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Skipf("no Docker engine answers (docker info: %v)", err)
	}
	if err := exec.Command("docker", "image", "inspect", docker.DefaultRedisImage).Run(); err != nil {
		t.Skipf("no %s image (make redis-image): %v", docker.DefaultRedisImage, err)
	}
	here := backend.PIDSpace()
	gone := container(t, fmt.Sprintf("%d/0", os.Getpid()), here) // our pid, another start: reused
	legacy := container(t, fmt.Sprintf("%d/0", os.Getpid()), "") // from before the pid space label
	live := container(t, backend.ProcessID(), here)
	elsewhere := container(t, "1/0", "elsewhere/pid:[1]")
	start := time.Now()
	n, err := docker.SweepLeftovers(context.Background(), 250*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("swept %d in %v", n, time.Since(start))
	for id, want := range map[string]bool{gone: false, legacy: false, live: true, elsewhere: true} {
		if exists(t, id) != want {
			t.Errorf("container %.12s: there %v, want %v", id, !want, want)
		}
	}
	// Not n == 2: another package's tests, run alongside, sweep too.
	if n > 2 {
		t.Errorf("SweepLeftovers = %d, want at most the 2 gone ones", n)
	}
}

// container starts a container labelled as the backend labels its nodes
// (no pid space label when space is ""), on no network.
func container(t *testing.T, owner, space string) string {
	t.Helper()
	args := []string{"run", "-d", "--network", "none", "--label", "org.lockchaos.managed=true", "--label", "org.lockchaos.owner=" + owner}
	if space != "" {
		args = append(args, "--label", "org.lockchaos.pidspace="+space)
	}
	out, err := exec.Command("docker", append(args, docker.DefaultRedisImage)...).Output()
	if err != nil {
		t.Fatalf("docker run: %v", err)
	}
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", id).Run() })
	return id
}

func exists(t *testing.T, id string) bool {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-a", "-q", "--no-trunc", "--filter", "id="+id).Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	return strings.TrimSpace(string(out)) != ""
}
