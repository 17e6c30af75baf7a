package main

import (
	"github.com/lockchaos/lockchaos/backend/external"

	"github.com/spf13/pflag"

	"github.com/lockchaos/lockchaos/internal/cobrakit"
	"github.com/lockchaos/lockchaos/internal/shellword"
	"github.com/lockchaos/lockchaos/scenarios"
)

// The run command's flag helpers and the catalog it loads.

// commandLine is the run's command line as typed after "run", for
// summary.json, each argument quoted for a shell (shellJoin).
func commandLine(args []string) string {
	// A password given in --postgres-url is never printed.
	return external.Redact(shellword.Join(append([]string{"lockchaos", "run"}, args...)))
}

// rerunLine is the run's command line (args, after "run") with each of
// pins (flag, value) in place of what was given for that flag: the line
// that reruns the whole run, whose random seed, measured time scale or
// shard from the CI's variables are nowhere in what was typed. The run's
// own flags say which take a value.
func rerunLine(args []string, pins [][2]string) string {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	(&runConfig{}).bind(fs)
	return commandLine(cobrakit.Pin(fs, args, pins))
}

// loadCatalog is scenarios.LoadCatalog, its errors named by the flags.
func loadCatalog(files []string, lockDrivers []string) ([]scenarios.Scenario, error) {
	catalog, err := scenarios.LoadCatalog(files, lockDrivers)
	return catalog, namedFlag(err)
}
