package reports

import "fmt"

// The cell page's "Server's view" section: per node, whether a witness
// watched it (and why not), how many leases it saw and how they ended;
// the keys the server names otherwise; the beliefs that outlived their
// lease. Without witness events it says the server was not watched, so
// every lease end is assumed from the TTL.

type serverSection struct {
	Watched bool
	Nodes   []serverNodeRow
	Names   []string
	// Outlived are the first beliefs that outlived their lease, in
	// words; OutlivedCount counts them all.
	Outlived      []string
	OutlivedCount int
}

type serverNodeRow struct {
	Node, Watched, Why, Endings string
	Leases, Extended, Found     int
}

// shownOutlived is how many outlived beliefs the section names.
const shownOutlived = 5

func serverSectionOf(t *timeline, end int64) *serverSection {
	s := &serverSection{Watched: t.watched}
	if !t.watched {
		return s
	}
	for _, n := range t.server.Nodes {
		row := serverNodeRow{Node: n.Node, Watched: n.Watched(end), Endings: n.Endings(), Leases: n.Leases,
			Extended: n.Extended, Found: n.Found}
		if len(n.Blind) > 0 {
			row.Why = n.Why
			if len(n.Sight) > 0 && !n.LateOnly() {
				row.Watched += fmt.Sprintf(" (unwatched for %s in all)", durText(n.Unwatched()))
			}
		}
		s.Nodes = append(s.Nodes, row)
	}
	s.Names = t.server.Names
	s.OutlivedCount = len(t.outlived)
	for i, o := range t.outlived {
		if i == shownOutlived {
			break
		}
		s.Outlived = append(s.Outlived, outlivedTitle(o))
	}
	return s
}
