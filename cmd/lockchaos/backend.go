package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/docker"
	"github.com/lockchaos/lockchaos/backend/external"
	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/internal/interrupt"
	"github.com/lockchaos/lockchaos/scenarios"
)

// redisImageUsage is the help of --redis-image, which chooseBackend hands
// to the docker backend.
const redisImageUsage = "image for the docker backend (default " + docker.DefaultRedisImage +
	", built by make redis-image, else " + docker.FallbackRedisImage + "; a missing image is pulled if a registry answers); " +
	"with --backend auto it means docker, and with process or external it is an error"

// backends are the values of --backend, with what each means.
var backends = []scenarios.Choice{
	{Name: "auto", Doc: "process if redis-server is installed, else docker"},
	{Name: "process", Doc: "a redis-server process per node"},
	{Name: "docker", Doc: "a container per node"},
	{Name: "external", Doc: "your own servers, from --redis-addr and --postgres-url"},
	{Name: sim.Name, Doc: "simulated: miniredis in virtual time, for fast sweeps; not real Redis"},
}

func isBackend(name string) bool {
	for _, b := range backends {
		if b.Name == name {
			return true
		}
	}
	return false
}

// backendNames is "auto, process, docker, external, sim", for messages.
func backendNames() string {
	names := make([]string, len(backends))
	for i, b := range backends {
		names[i] = b.Name
	}
	return strings.Join(names, ", ")
}

// chooseBackend turns --backend into a Backend and the Redis version it
// runs. auto prefers local processes, then Docker, else says how to get
// either; auto with an image (--redis-image) is Docker, and auto with
// LOCKCHAOS_REDIS_SERVER set is processes (a binary chosen on purpose that
// does not work is an error, not a reason to try Docker). What it asks of
// programs and engines ends at SIGINT or SIGTERM (see untilSignal).
func chooseBackend(name, image string, ext external.Config) (backend.Backend, string, error) {
	ctx, done := untilSignal(30 * time.Second)
	defer done()
	processes := func() (backend.Backend, string, error) {
		b, v, err := process.Local(ctx)
		if err != nil {
			return nil, "", err
		}
		return b, v, nil
	}
	containers := func() (backend.Backend, string, error) {
		b, err := docker.NewBackend(ctx, docker.Config{Image: image})
		if err != nil {
			return nil, "", err
		}
		return b, "(image " + b.Image() + ")", nil
	}
	switch name {
	case "external":
		b, err := external.New(ext)
		if err != nil {
			return nil, "", err
		}
		return b, "(external)", nil
	case "process":
		return processes()
	case "docker":
		return containers()
	}
	if image != "" {
		return containers()
	}
	b, v, perr := processes()
	if perr == nil || process.ExplicitRedisServer() || ctx.Err() != nil {
		return b, v, perr
	}
	b, v, derr := containers()
	if derr == nil {
		return b, v, nil
	}
	return nil, "", fmt.Errorf("no way to run Redis here:\n  process backend: %w\n  docker backend: %w\n%s", perr, derr,
		strings.TrimSpace(`either install redis-server (apt-get install redis-server, brew install redis),
or start Docker and build the image with "make redis-image"`))
}

// untilSignal is the context of choosing a backend: it ends after limit,
// or at SIGINT or SIGTERM, which also end the program it is asking (a
// redis-server --version that hangs). done, called once the choice is
// made, stops listening; if a signal came, it exits with the interrupted
// run's code (130, 143) at once: nothing has started yet that needs
// closing, and the run's own handler, which writes partial results,
// comes later.
func untilSignal(limit time.Duration) (context.Context, func()) {
	ctx, done := interrupt.Bounded(limit)
	return ctx, func() {
		if code := interrupt.Code(done()); code != 0 {
			fmt.Fprintf(os.Stderr, "lockchaos: interrupted (%s) while choosing the backend; nothing had started\n", interrupt.Name(code))
			os.Exit(code)
		}
	}
}

// dockerAnswer is how long a run waits for a Docker engine to answer
// before it sweeps leftovers. Measured: an engine on this machine answers
// the ping and the listing in 1-20 ms, a missing socket fails in under
// 2 ms; only an engine that accepts and then hangs costs the bound.
const dockerAnswer = 250 * time.Millisecond

// sweepContainers removes the containers of lockchaos runs that were
// killed outright (SIGKILL): they keep running on the host network, so
// every run sweeps them, whatever its backend, when a Docker engine
// answers (docker.SweepLeftovers; no engine costs nothing).
func sweepContainers(stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if n, _ := docker.SweepLeftovers(ctx, dockerAnswer); n > 0 {
		fmt.Fprintf(stderr, "lockchaos: removed %d container(s) left by lockchaos runs that were killed\n", n)
	}
}

// replayBackend is the real backend --replay-on names, or nil without it.
func replayBackend(name, image string) (backend.Backend, string, error) {
	if name == "" {
		return nil, "", nil
	}
	return chooseBackend(name, image, external.Config{})
}
