package margins

import (
	"fmt"

	"github.com/lockchaos/lockchaos/lockimpl"
)

// LocksNamed looks up the locks to search (a driver lock registered
// before), each Searchable; simOnly says the search has no real Redis to
// run on, where a lock in a driver process cannot be searched.
func LocksNamed(names []string, simOnly bool) ([]lockimpl.Spec, error) {
	var specs []lockimpl.Spec
	for _, name := range names {
		spec, err := lockimpl.Lookup(name)
		if err != nil {
			return nil, err
		}
		if err := Searchable(spec); err != nil {
			return nil, err
		}
		if spec.OutOfProcess && simOnly {
			return nil, fmt.Errorf("lock %s runs in a driver process, which the simulation cannot run: its search needs "+
				"real Redis (--backend process, or a --confirm-on other than none)", name)
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// WriteAll writes the report's files under out (WriteFiles) and, when
// the search is whole (not interrupted), its Markdown table into the
// markers of the file markdown ("": none): an interrupted search's table
// is partial, and the file it would replace keeps its last whole one. It
// returns the files written.
func (r *Report) WriteAll(out, markdown string, whole bool) ([]string, error) {
	wrote, err := r.WriteFiles(out)
	if err == nil && markdown != "" && whole {
		if err = r.WriteMarkdownInto(markdown); err == nil {
			wrote = append(wrote, markdown)
		}
	}
	return wrote, err
}
