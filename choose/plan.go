package choose

import (
	"fmt"
	"slices"

	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// NoFaults is the family of a scenario without faults: the baseline,
// the first column.
const NoFaults = "no faults"

// Plan is which cells a table runs and where each lands: a row per
// (lock, place), a column per family.
type Plan struct {
	Rows []*Row
	// Cells are the matrix's cells, in the order they run.
	Cells []scenarios.Cell
	// Cost are each row's cell its cost is measured on (its no-fault
	// scenario, else its first), by row name.
	Cost map[string]scenarios.Cell
	// Specs are each row's lock, by row name.
	Specs map[string]lockimpl.Spec

	where map[string]*Cell // "scenario/lock" -> the table cell it counts in
	rowOf map[string]*Row  // "scenario/lock" -> its row
}

// NewPlan lays cells out as a table: each becomes a run of the cell of
// its lock's row (the lock, on Redis Cluster when its scenario runs
// there) and its scenario's family (its first fault's). Quick keeps one
// scenario per row and family: the first the catalog lists.
func NewPlan(cells []scenarios.Cell, quick bool) *Plan {
	p := &Plan{Cost: map[string]scenarios.Cell{}, Specs: map[string]lockimpl.Spec{},
		where: map[string]*Cell{}, rowOf: map[string]*Row{}}
	byName := map[string]*Row{}
	for _, c := range cells {
		if c.Expect.Safety == results.NotApplicable {
			continue // the catalog says the lock has no place here
		}
		name, place := rowName(c)
		row := byName[name]
		if row == nil {
			row = newRow(c.Lock, name, place)
			byName[name] = row
			p.Rows = append(p.Rows, row)
			p.Specs[name] = c.Lock
		}
		fam := familyOf(c.Scenario)
		cell := row.cell(fam)
		if quick && len(cell.Scenarios) > 0 {
			continue
		}
		cell.Scenarios = append(cell.Scenarios, c.Scenario.Name)
		e := c.Expect.Expected()
		if stricter := stricterSafety(cell.Expect, e.Safety); stricter != cell.Expect || cell.Why == "" {
			// The column's reason is its strictest scenario's.
			cell.Expect, cell.Why = stricter, e.Why
		}
		cell.Liveness = stricterLiveness(cell.Liveness, e.Liveness)
		if _, ok := p.Cost[name]; !ok || (fam == NoFaults && familyOf(p.Cost[name].Scenario) != NoFaults) {
			p.Cost[name] = c
		}
		p.where[c.Name()] = cell
		p.rowOf[c.Name()] = row
		p.Cells = append(p.Cells, c)
	}
	order := familyOrder()
	for _, row := range p.Rows {
		slices.SortStableFunc(row.Safety, func(a, b *Cell) int { return order[a.Family] - order[b.Family] })
	}
	slices.SortStableFunc(p.Rows, func(a, b *Row) int { return rowRank(a) - rowRank(b) })
	return p
}

// rowName is the cell's row: its lock, with the place where that is not
// the lock's own deployment.
func rowName(c scenarios.Cell) (name, place string) {
	if c.Scenario.Topology == deployment.Cluster {
		place = "Redis Cluster"
	}
	if c.Scenario.Topology == deployment.Sentinel {
		place = "Redis Sentinel"
	}
	if place == "" {
		return c.Lock.Name, ""
	}
	return c.Lock.Name + " @ " + place, place
}

// rowRank orders rows as the registry lists locks, a lock's own place
// before Redis Cluster.
func rowRank(r *Row) int {
	rank := len(lockimpl.Names())
	if i := slices.Index(lockimpl.Names(), r.Lock); i >= 0 {
		rank = i
	}
	rank *= 2
	if r.Place != "" {
		rank++
	}
	return rank
}

func newRow(spec lockimpl.Spec, name, place string) *Row {
	_, err := lockimpl.Lookup(spec.Name)
	r := &Row{Name: name, Lock: spec.Name, Doc: spec.Doc, Place: place, User: spec.OutOfProcess || err != nil,
		Needs: needsOf(spec, place)}
	r.Liveness.Crash.Cause, r.Liveness.Hang.Cause, r.Liveness.Partition.Cause = causeCrashed, causeAbandoned, causeCutOff
	return r
}

// cell is the row's cell of family fam, made on first use.
func (r *Row) cell(fam string) *Cell {
	for _, c := range r.Safety {
		if c.Family == fam {
			return c
		}
	}
	c := &Cell{Family: fam}
	r.Safety = append(r.Safety, c)
	return c
}

// Cell is the row's cell of family fam, or nil.
func (r *Row) Cell(fam string) *Cell {
	for _, c := range r.Safety {
		if c.Family == fam {
			return c
		}
	}
	return nil
}

// familyOf is a scenario's column: its first fault's family.
func familyOf(s scenarios.Scenario) string {
	if len(s.Faults) == 0 {
		return NoFaults
	}
	k, err := faults.LookupKind(s.Faults[0].Kind)
	if err != nil {
		return s.Faults[0].Kind // validated scenarios name known kinds
	}
	return string(k.Family)
}

// familyOrder ranks the columns: no faults, then faults.Families.
func familyOrder() map[string]int {
	m := map[string]int{NoFaults: 0}
	for i, f := range faults.Families() {
		m[string(f)] = i + 1
	}
	return m
}

// Columns are the families, in order, that some row met.
func Columns(rows []*Row) []Family {
	seen := map[string]bool{}
	for _, r := range rows {
		for _, c := range r.Safety {
			seen[c.Family] = true
		}
	}
	var out []Family
	if seen[NoFaults] {
		out = append(out, Family{Name: NoFaults, Doc: "the baseline: the workload alone"})
	}
	for _, f := range faults.Families() {
		if seen[string(f)] {
			out = append(out, Family{Name: string(f), Doc: f.Doc()})
		}
	}
	return out
}

// needsOf says what a lock asks of its users, at place.
func needsOf(spec lockimpl.Spec, place string) Needs {
	n := Needs{Resource: "nothing", Settings: spec.Settings, Traits: spec.Describe()}
	switch {
	case spec.InTransaction:
		n.Resource = "in the lock's transaction"
	case spec.Fencing:
		n.Resource = "checks a fence"
	}
	switch {
	case spec.Nodes == 0:
		n.Servers = "none (in-process)"
	case place != "":
		n.Servers = place + " (3 primaries, 3 replicas)"
		if place == "Redis Sentinel" {
			n.Servers = place + " (a primary, a replica, 3 Sentinels)"
		}
	case !spec.Service.IsRedis():
		n.Servers = fmt.Sprintf("%d %s", spec.Nodes, spec.Service.Server())
		if spec.Nodes > 1 {
			n.Servers += "s"
		}
	case spec.Nodes == 1:
		n.Servers = "1 Redis"
	default:
		n.Servers = fmt.Sprintf("%d independent Redis", spec.Nodes)
	}
	if spec.NeedsReplica && place == "" {
		n.Servers += " + a replica"
	}
	return n
}

// stricterSafety is the stricter of two safety expectations: unsafe over
// either over safe (a column's expectation is its worst scenario's).
func stricterSafety(a, b results.Expectation) results.Expectation {
	rank := map[results.Expectation]int{"": 0, results.Safe: 1, results.Either: 2, results.Unsafe: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// stricterLiveness: stuck over either over live.
func stricterLiveness(a, b results.Expectation) results.Expectation {
	rank := map[results.Expectation]int{"": 0, results.Live: 1, results.Either: 2, results.Stuck: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// keep drops every built-in row not named in names, and its cells; a
// user's row (a driver lock, a library) always stays.
func (p *Plan) keep(names []string) {
	drop := func(r *Row) bool { return r == nil || (!r.User && !slices.Contains(names, r.Name)) }
	p.Rows = slices.DeleteFunc(p.Rows, drop)
	p.Cells = slices.DeleteFunc(p.Cells, func(c scenarios.Cell) bool { return drop(p.rowOf[c.Name()]) })
}
