package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/lockimpl"
)

const listUsage = `Usage: lockchaos list [--scenarios-file FILE]

Lists the scenarios with their faults and expectations per lock, the locks
and the fault kinds.

Example:
  lockchaos list --scenarios-file my.yaml

Flags:
`

func cmdList(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var files stringList
	fs.Var(&files, "scenarios-file", "YAML file of extra scenarios and driver locks (repeatable)")
	var lockDrivers multiList
	fs.Var(&lockDrivers, "lock-driver", "a lock served by a driver process, NAME=COMMAND (repeatable)")
	fs.Usage = func() { fmt.Fprint(stderr, listUsage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	catalog, err := loadCatalog(files, lockDrivers)
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos list: %v\n", err)
		return exitUsage
	}
	locks := lockimpl.Names()
	fmt.Fprintf(stdout, "%-22s", "SCENARIO")
	for _, l := range locks {
		fmt.Fprintf(stdout, " %-14s", l)
	}
	fmt.Fprintln(stdout)
	for _, s := range catalog {
		fmt.Fprintf(stdout, "%-22s", s.Name)
		for _, l := range locks {
			e := string(s.Expect[l])
			if e == "" {
				e = "-"
			}
			fmt.Fprintf(stdout, " %-14s", e)
		}
		fmt.Fprintln(stdout)
	}
	fmt.Fprintln(stdout, "\nScenarios:")
	for _, s := range catalog {
		sd := s.WithDefaults()
		var fk []string
		for _, f := range sd.Faults {
			fk = append(fk, f.Kind)
		}
		if len(fk) == 0 {
			fk = []string{"none"}
		}
		fmt.Fprintf(stdout, "  %-22s %s\n  %-22s ttl %v, %d clients, work %v-%v, faults: %s\n",
			s.Name, s.Description, "", sd.TTL, sd.Clients, sd.WorkMin, sd.WorkMax, strings.Join(fk, ", "))
	}
	fmt.Fprintln(stdout, "\nLocks (the deployment each gets follows from its traits):")
	for _, l := range lockimpl.Specs() {
		fmt.Fprintf(stdout, "  %-22s %s\n  %-22s %s\n", l.Name, l.Doc, "", l.Describe())
	}
	fmt.Fprintln(stdout, "  in-process locks run in baseline, or in any scenario named with --lock (unsafe everywhere)")
	fmt.Fprintln(stdout, "\nFault kinds:")
	for _, k := range faults.Kinds() {
		fmt.Fprintf(stdout, "  %-22s %s\n", k.Name, k.Doc)
	}
	fmt.Fprintln(stdout, "\nExpectations: safe (must pass), unsafe (must be detected), either (reported, not gated), n/a (not run), - (not in this scenario)")
	return exitOK
}
