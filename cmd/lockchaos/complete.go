package main

import (
	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/scenarios"
)

// Shell completion. cobra writes the scripts (completion.go); each script
// asks the binary (cobra's hidden __complete command) for a flag's values,
// and these functions answer from the registries, so a lock, scenario or
// backend added there completes without a change here. Each value carries
// its one-line doc, which zsh, fish and PowerShell show beside it.

// choices turns names with their docs into completions.
func choices(names []scenarios.Choice) []cobra.Completion {
	out := make([]cobra.Completion, 0, len(names))
	for _, n := range names {
		out = append(out, cobra.CompletionWithDesc(n.Name, n.Doc))
	}
	return out
}
