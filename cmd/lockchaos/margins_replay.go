package main

import (
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
	margins.RunLines(found, c.files, c.out, c.lockDrivers, on)
}
