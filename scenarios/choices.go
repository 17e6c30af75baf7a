package scenarios

import (
	"strings"

	"github.com/lockchaos/lockchaos/lockimpl"
)

// Choice is a name with its one-line doc: what a shell's completion
// offers for a flag, and shows beside it.
type Choice struct{ Name, Doc string }

// ScenarioChoices are the catalog's scenarios with those of the scenario
// files given. A file that does not load adds
// nothing: completion is no place for its error.
func ScenarioChoices(files []string) []Choice {
	catalog := Catalog()
	for _, f := range files {
		if file, err := ReadFile(f); err == nil {
			catalog = Merge(catalog, file.Scenarios)
		}
	}
	out := make([]Choice, 0, len(catalog))
	for _, s := range catalog {
		out = append(out, Choice{s.Name, s.Description})
	}
	return out
}

// LockChoices are the registered locks and the driver locks the scenario
// files and the driver declarations (NAME=COMMAND) declare. Nothing is
// registered: the names are read, so completing twice in one process
// cannot collide.
func LockChoices(files, lockDrivers []string) []Choice {
	var out []Choice
	seen := map[string]bool{}
	add := func(name, doc string) {
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, Choice{name, doc})
		}
	}
	for _, s := range lockimpl.Specs() {
		add(s.Name, s.Doc)
	}
	for _, f := range files {
		if file, err := ReadFile(f); err == nil {
			for _, l := range file.Locks {
				add(l.Name, "driver: "+l.Command)
			}
		}
	}
	for _, v := range lockDrivers {
		name, command, _ := strings.Cut(v, "=")
		add(strings.TrimSpace(name), "driver: "+strings.TrimSpace(command))
	}
	return out
}

// ExpectationChoices are the expectation words with their docs.
func ExpectationChoices() []Choice {
	words := ExpectationWords()
	out := make([]Choice, 0, len(words))
	for _, e := range words {
		out = append(out, Choice{string(e), ExpectationDocs[e]})
	}
	return out
}
