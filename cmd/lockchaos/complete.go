package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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

// choiceCompletion offers the values that start with what is typed.
func choiceCompletion(choices func() []cobra.Completion) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, c := range choices() {
			if name, _, _ := strings.Cut(c, "\t"); strings.HasPrefix(name, toComplete) {
				out = append(out, c)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// listCompletion completes the last item of a comma-separated flag value
// (--scenario baseline,gc<TAB>), leaving out the items already listed;
// each candidate repeats the typed head, as the shell replaces the word.
func listCompletion(choices func() []cobra.Completion) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		head, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			head, last = toComplete[:i+1], toComplete[i+1:]
		}
		listed := strings.Split(head, ",")
		var out []cobra.Completion
		for _, c := range choices() {
			name, _, _ := strings.Cut(c, "\t")
			if strings.HasPrefix(name, last) && !slices.Contains(listed, name) {
				out = append(out, head+c)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// noCompletionForTheRest keeps the shell from offering file names for a
// flag whose value is a number, a duration or a name we cannot list: a
// flag with neither a completion function nor a file or directory mark
// completes to nothing.
func noCompletionForTheRest(c *cobra.Command) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if _, ok := c.GetFlagCompletionFunc(f.Name); ok || f.NoOptDefVal != "" {
			return
		}
		if _, ok := f.Annotations[cobra.BashCompFilenameExt]; ok {
			return
		}
		if _, ok := f.Annotations[cobra.BashCompSubdirsInDir]; ok {
			return
		}
		must(c.RegisterFlagCompletionFunc(f.Name, cobra.NoFileCompletions))
	})
}

// must panics on an error that only a mistake in this package can cause
// (registering completion for a flag that does not exist, or twice).
func must(err error) {
	if err != nil {
		panic(err)
	}
}
