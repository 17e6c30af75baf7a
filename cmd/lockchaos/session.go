package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/external"
	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/scenarios"
	"github.com/lockchaos/lockchaos/service"
	"github.com/lockchaos/lockchaos/service/postgres"
	"github.com/lockchaos/lockchaos/session"
)

// execute runs the cells c selected on be (replaying findings on replay,
// or nil) as session.Run does, args being the command line after "run".
func execute(c runConfig, cells []scenarios.Cell, args []string, be, replay backend.Backend,
	redisVersion, replayVersion string, stdout, stderr io.Writer,
) int {
	return session.Run(session.Options{
		Cells: cells, Backend: be, RedisVersion: redisVersion, PostgresVersion: postgresVersion(cells, be),
		Replay: replay, ReplayVersion: replayVersion,
		TimeScale: c.timeScale, Seed: c.seed, Repeat: c.repeat, Parallel: c.parallel,
		SameSeed: c.sameSeed, KeepHistories: c.keepHistories, JSON: c.asJSON,
		Shard: c.shard, Out: c.out, Version: version, Command: commandLine(args),
		// A replay backend is real and --replay-on goes with --backend
		// sim, so rerunBackend names it as it is.
		CellOptions: func(be backend.Backend, t scenarios.Timing, notify func(string)) scenarios.Options {
			return c.cellOptions(target{be: be, Timing: t, named: c.rerunBackend(be)}, notify)
		},
		Rerun:  func(t scenarios.Timing) string { return rerunAll(c, args, t) },
		Stdout: stdout, Stderr: stderr,
	})
}

// postgresVersion is the local PostgreSQL's version when some cell runs on
// it (process backend), for the run's header and summary; "" otherwise.
func postgresVersion(cells []scenarios.Cell, be backend.Backend) string {
	if e, ok := be.(*external.Backend); ok {
		return e.PostgresVersion
	}
	if be.Name() != process.Name {
		return ""
	}
	for _, c := range cells {
		if c.Lock.Service == service.Postgres {
			v, err := postgres.Version()
			if err != nil {
				return "postgres: " + err.Error()
			}
			return v
		}
	}
	return ""
}

// rerunAll is the line that reruns the whole run on: the command as
// typed with the seed, the time scale (none in virtual time, nor when
// calibration did not finish) and the shard it ran with.
func rerunAll(c runConfig, args []string, on scenarios.Timing) string {
	pins := [][2]string{{"seed", strconv.FormatInt(c.seed, 10)}}
	if c.pgURL != "" {
		pins = append(pins, [2]string{"postgres-url", external.WithoutPassword(c.pgURL)})
	}
	if !on.Virtual && on.Scale != 0 {
		pins = append(pins, [2]string{"time-scale", fmt.Sprintf("%.2f", on.Scale)})
	}
	if c.shard != "" {
		pins = append(pins, [2]string{"shard", c.shard})
	}
	return rerunLine(args, pins)
}
