package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/lockchaos/lockchaos/backend"

	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

const listUsage = `Lists the scenarios with their faults and expectations per lock (safety and
liveness: "unsafe/live"), the locks and the fault kinds. With --json, one
JSON document with the same content (format 2: {"format", "scenarios",
"locks", "fault_kinds"}; each expectation {"safety", "liveness", "unsafe"}).

Examples:
  lockchaos list --scenarios-file my.yaml
  lockchaos list --json | jq '.scenarios[].name'`

func newListCmd(cl *cli) *cobra.Command {
	var files stringList
	var lockDrivers multiList
	var asJSON bool
	c := &cobra.Command{
		Use: "list", Short: "scenarios, locks, expectations, fault kinds", Long: listUsage,
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
	must(c.MarkFlagFilename("scenarios-file", "yaml", "yml"))
	noCompletionForTheRest(c)
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
		return listJSON(stdout, stderr, catalog)
	}
	locks := lockimpl.Names()
	fmt.Fprintf(stdout, "%-22s", "SCENARIO")
	for _, l := range locks {
		fmt.Fprintf(stdout, " %-14s", l)
	}
	fmt.Fprintln(stdout)
	var only []string // the cells that single out the properties allowed to fail
	for _, s := range catalog {
		fmt.Fprintf(stdout, "%-22s", s.Name)
		for _, l := range locks {
			e, ok := s.Expect[l]
			w := "-"
			if ok {
				w = listedExpect(e)
			}
			if len(e.MayFail) > 0 {
				only = append(only, fmt.Sprintf("  %s/%s: only %s may fail", s.Name, l, e.SafetyText()))
			}
			fmt.Fprintf(stdout, " %-14s", w)
		}
		fmt.Fprintln(stdout)
	}
	if len(only) > 0 {
		fmt.Fprintln(stdout, "* "+strings.TrimSpace(strings.Join(only, "\n")))
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
	fmt.Fprintln(stdout, "\nExpectations, safety/liveness: "+expectationLegend())
	return exitOK
}

// listedExpect is an expectation in the listing's table: safety/liveness
// ("unsafe/live"), a * where only some properties may fail (listed under
// the table), the one word of an n/a cell.
func listedExpect(e scenarios.Expect) string {
	e = e.Expected()
	if e.Safety == scenarios.NotApplicable {
		return string(e.Safety)
	}
	w := string(e.Safety)
	if len(e.MayFail) > 0 {
		w += "*"
	}
	return w + "/" + string(e.Liveness)
}

// listFormat is `list --json`'s format: 2 since expectations have a
// group each (docs/schema/list.v2.json).
const listFormat = 2

// listing is `list --json`: the scenarios with defaults filled, the locks
// with their traits, the fault kinds with what they need.
type listing struct {
	Format     int                  `json:"format"`
	Scenarios  []scenarios.Scenario `json:"scenarios"`
	Locks      []listedLock         `json:"locks"`
	FaultKinds []listedKind         `json:"fault_kinds"`
}

type listedLock struct {
	Name        string `json:"name"`
	Doc         string `json:"doc"`
	Nodes       int    `json:"nodes"`
	Fencing     bool   `json:"fencing,omitempty"`
	Renews      bool   `json:"renews,omitempty"`
	SignalsLoss bool   `json:"signals_loss,omitempty"`
	Traits      string `json:"traits"`
}

type listedKind struct {
	Name   string        `json:"name"`
	Doc    string        `json:"doc"`
	Moment string        `json:"dangerous_moment,omitempty"`
	Needs  backend.Needs `json:"needs"`
}

func listJSON(stdout, stderr io.Writer, catalog []scenarios.Scenario) int {
	l := listing{Format: listFormat}
	for _, s := range catalog {
		l.Scenarios = append(l.Scenarios, s.WithDefaults())
	}
	for _, s := range lockimpl.Specs() {
		l.Locks = append(l.Locks, listedLock{Name: s.Name, Doc: s.Doc, Nodes: s.Nodes, Fencing: s.Fencing, Renews: s.Renews,
			SignalsLoss: s.SignalsLoss, Traits: s.Describe()})
	}
	for _, k := range faults.Kinds() {
		l.FaultKinds = append(l.FaultKinds, listedKind{Name: k.Name, Doc: k.Doc, Moment: k.Moment, Needs: k.Needs})
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(l); err != nil {
		fmt.Fprintf(stderr, "lockchaos list: %v\n", err)
		return exitHarness
	}
	return exitOK
}
