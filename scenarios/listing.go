package scenarios

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
)

// What `lockchaos list` shows: the catalog's scenarios with their
// expectations per lock, the registered locks and the fault kinds, as a
// table or as one JSON document (Listing).

// WriteListing writes catalog as a table for people: a row per scenario,
// a column per registered lock, then each scenario, lock and fault kind
// with its description, then the legend of the expectations.
func WriteListing(stdout io.Writer, catalog []Scenario) {
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
				only = append(only, fmt.Sprintf("  %s: only %s may fail", results.CellName(s.Name, l), e.SafetyText()))
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
	fmt.Fprintln(stdout, "\nExpectations, safety/liveness: "+ExpectationLegend())
}

// listedExpect is an expectation in the listing's table: safety/liveness
// ("unsafe/live"), a * where only some properties may fail (listed under
// the table), the one word of an n/a cell.
func listedExpect(e Expect) string {
	e = e.Expected()
	if e.Safety == NotApplicable {
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
const ListingFormat = 2

// listing is `list --json`: the scenarios with defaults filled, the locks
// with their traits, the fault kinds with what they need.
type Listing struct {
	Format     int          `json:"format"`
	Scenarios  []Scenario   `json:"scenarios"`
	Locks      []listedLock `json:"locks"`
	FaultKinds []listedKind `json:"fault_kinds"`
}

type listedLock struct {
	Name        string `json:"name"`
	Doc         string `json:"doc"`
	Nodes       int    `json:"nodes"`
	Fencing     bool   `json:"fencing,omitempty"`
	Renews      bool   `json:"renews,omitempty"`
	SignalsLoss bool   `json:"signals_loss,omitempty"`
	Traits      string `json:"traits"`
	// Service is the lock service ("redis", "postgres"); Settings the
	// server settings it runs with ("" for the server's defaults).
	Service       string `json:"service"`
	Settings      string `json:"settings,omitempty"`
	InTransaction bool   `json:"in_transaction,omitempty"`
}

type listedKind struct {
	Name   string        `json:"name"`
	Doc    string        `json:"doc"`
	Moment string        `json:"dangerous_moment,omitempty"`
	Needs  backend.Needs `json:"needs"`
}

// NewListing is catalog, the registered locks and the fault kinds as
// `lockchaos list --json` prints them.
func NewListing(catalog []Scenario) Listing {
	l := Listing{Format: ListingFormat}
	for _, s := range catalog {
		l.Scenarios = append(l.Scenarios, s.WithDefaults())
	}
	for _, s := range lockimpl.Specs() {
		l.Locks = append(l.Locks, listedLock{Name: s.Name, Doc: s.Doc, Nodes: s.Nodes, Fencing: s.Fencing, Renews: s.Renews,
			SignalsLoss: s.SignalsLoss, Traits: s.Describe(), Service: string(s.Service.Or()), Settings: s.Settings,
			InTransaction: s.InTransaction})
	}
	for _, k := range faults.Kinds() {
		l.FaultKinds = append(l.FaultKinds, listedKind{Name: k.Name, Doc: k.Doc, Moment: k.Moment, Needs: k.Needs})
	}
	return l
}

// WriteJSON writes the listing as one indented JSON document.
func (l Listing) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(l)
}

// ExpectationDocs say what each expectation asks of a cell's group.
var ExpectationDocs = map[results.Expectation]string{
	results.Safe:          "must pass",
	results.Unsafe:        "must be detected",
	results.Either:        "reported, not gated",
	results.NotApplicable: "not run",
	results.Live:          "must keep working: a stopped holder's lock is freed, pods acquire while a majority is up",
	results.Stuck:         "must be caught stuck",
}

// ExpectationWords are what --expect takes: the safety words, then the
// liveness ones (either is both).
func ExpectationWords() []results.Expectation {
	out := slices.Clone(results.Expectations)
	for _, e := range results.LivenessExpectations {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// ExpectationNames is "safe, unsafe, either, n/a, live, stuck", for
// messages.
func ExpectationNames() string {
	words := ExpectationWords()
	names := make([]string, len(words))
	for i, e := range words {
		names[i] = string(e)
	}
	return strings.Join(names, ", ")
}

// ExpectationLegend is the list command's closing line.
func ExpectationLegend() string {
	legend := func(es []results.Expectation) string {
		parts := make([]string, 0, len(es))
		for _, e := range es {
			parts = append(parts, fmt.Sprintf("%s (%s)", e, ExpectationDocs[e]))
		}
		return strings.Join(parts, ", ")
	}
	return "safety " + legend(results.Expectations) + "; liveness " + legend(results.LivenessExpectations) +
		"; - (not in this scenario)"
}

// KeepExpected keeps the cells whose expectation one of expects names
// (all when it names none): a safety word matches a cell's safety, live and
// stuck its liveness; either matches either group.
func KeepExpected(cells []Cell, expects []string) ([]Cell, error) {
	if len(expects) == 0 {
		return cells, nil
	}
	want := map[Expectation]bool{}
	for _, e := range expects {
		if !slices.Contains(ExpectationWords(), Expectation(e)) {
			return nil, invalid("expect", fmt.Sprintf("%q", e), "valid: "+ExpectationNames())
		}
		want[Expectation(e)] = true
	}
	var kept []Cell
	for _, c := range cells {
		e := c.Expect.Expected()
		if want[e.Safety] || want[e.Liveness] {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("no cell has expectation %v", expects)
	}
	return kept, nil
}
