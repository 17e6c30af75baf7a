package main

import (
	"github.com/lockchaos/lockchaos/internal/shellword"
	"path/filepath"
	"strconv"

	"github.com/lockchaos/lockchaos/margins"
)

// replayCommands rewrites each boundary's replay command (printed, and in
// margins.json) as one a shell runs as pasted: every word quoted (an
// --out with a space in it split the line), the --scenarios-file and
// --lock-driver margins was given passed on (run knows a driver lock only
// from them), on the real Redis margins used (docker, where it confirmed
// on docker).
func replayCommands(found []margins.Margin, c marginsConfig) {
	on := "process"
	switch {
	case c.confirmOn != "none":
		on = c.confirmOn
	case c.backend != "sim":
		on = c.backend
	}
	for i := range found {
		s := found[i].Shrunk
		if s == nil || s.Replay == "" {
			continue // no schedule in found.yaml: nothing to replay
		}
		args := []string{"lockchaos", "run"}
		for _, f := range c.files {
			args = append(args, "--scenarios-file", f)
		}
		args = append(args, "--scenarios-file", filepath.Join(c.out, "found.yaml"), "--scenario", s.Scenario,
			"--lock", found[i].Lock)
		for _, d := range c.lockDrivers {
			args = append(args, "--lock-driver", d)
		}
		s.Replay = shellword.Join(append(args, "--seed", strconv.FormatInt(s.Seed, 10), "--backend", on))
	}
}
