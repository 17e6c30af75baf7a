package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/internal/cobrakit"
	"github.com/lockchaos/lockchaos/internal/flagvalue"
	"github.com/lockchaos/lockchaos/scenarios"
)

func newListCmd(cl *cli) *cobra.Command {
	var files flagvalue.List
	var lockDrivers flagvalue.Multi
	var asJSON bool
	c := &cobra.Command{
		Use: "list", Short: "scenarios, locks, expectations, fault kinds", Long: usage("list"),
		Args: cobra.ArbitraryArgs, // list says itself that it takes no arguments
		RunE: func(_ *cobra.Command, rest []string) error {
			return done(cmdList(rest, files, lockDrivers, asJSON, cl.stdout, cl.stderr))
		},
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	fs := c.Flags()
	fs.Var(&files, "scenarios-file", "YAML `file` of extra scenarios and driver locks (repeatable); "+
		"a file's lock runs in the scenarios its expect lists, gated")
	fs.Var(&lockDrivers, "lock-driver", "a lock served by a driver process, NAME=COMMAND (repeatable; docs/driver-protocol.md); "+
		"runs only when named in --lock, then in every scenario, reported as either (not gated)")
	fs.BoolVar(&asJSON, "json", false, "print the listing as one JSON document")
	cobrakit.Must(c.MarkFlagFilename("scenarios-file", "yaml", "yml"))
	cobrakit.NoFilesForTheRest(c)
	return c
}

func cmdList(rest, files, lockDrivers []string, asJSON bool, stdout, stderr io.Writer) int {
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "lockchaos list: unexpected argument %q (list takes flags only)\n", rest[0])
		return exitUsage
	}
	catalog, err := loadCatalog(files, lockDrivers)
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos list: %v\n", err)
		return exitUsage
	}
	if asJSON {
		if err := scenarios.NewListing(catalog).WriteJSON(stdout); err != nil {
			fmt.Fprintf(stderr, "lockchaos list: %v\n", err)
			return exitHarness
		}
		return exitOK
	}
	scenarios.WriteListing(stdout, catalog)
	return exitOK
}
