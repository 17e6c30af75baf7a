package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

// Shell completion. cobra writes the scripts (completion.go); each script
// asks the binary (cobra's hidden __complete command) for a flag's values,
// and these functions answer from the registries, so a lock, scenario or
// backend added there completes without a change here. Each value carries
// its one-line doc, which zsh, fish and PowerShell show beside it.

// scenarioChoices are the catalog's scenarios with those of the scenario
// files already on the command line. A file that does not load adds
// nothing: completion is no place for its error.
func scenarioChoices(files []string) []cobra.Completion {
	catalog := scenarios.Catalog()
	for _, f := range files {
		if file, err := scenarios.ReadFile(f); err == nil {
			catalog = scenarios.Merge(catalog, file.Scenarios)
		}
	}
	out := make([]cobra.Completion, 0, len(catalog))
	for _, s := range catalog {
		out = append(out, cobra.CompletionWithDesc(s.Name, s.Description))
	}
	return out
}

// lockChoices are the registered locks and the driver locks the scenario
// files and --lock-driver flags on the command line declare. Nothing is
// registered: the names are read, so completing twice in one process
// cannot collide.
func lockChoices(files, lockDrivers []string) []cobra.Completion {
	var out []cobra.Completion
	seen := map[string]bool{}
	add := func(name, doc string) {
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, cobra.CompletionWithDesc(name, doc))
		}
	}
	for _, s := range lockimpl.Specs() {
		add(s.Name, s.Doc)
	}
	for _, f := range files {
		if file, err := scenarios.ReadFile(f); err == nil {
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

func expectationChoices() []cobra.Completion {
	words := scenarios.ExpectationWords()
	out := make([]cobra.Completion, 0, len(words))
	for _, e := range words {
		out = append(out, cobra.CompletionWithDesc(string(e), scenarios.ExpectationDocs[e]))
	}
	return out
}

func backendChoices() []cobra.Completion {
	out := make([]cobra.Completion, 0, len(backends))
	for _, b := range backends {
		out = append(out, cobra.CompletionWithDesc(b.name, b.doc))
	}
	return out
}
