package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockchaos/lockchaos/internal/suggest"
)

// longFlags rewrites single-dash long flags (-json, -seed=5) as pflag
// wants them (--json, --seed=5). The standard flag package this CLI used
// to parse with accepted both, and command lines in scripts and CI jobs
// must keep working. We define no one-letter flags but cobra's -h and -v,
// so a single dash before two or more letters is always a long flag, as it
// was for the flag package (an unknown one then gets the usual suggestion).
// Values are never rewritten (--budget -1s), nor is anything after "--":
// the command is looked up first because only its flags say which take a
// value.
func longFlags(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd.DisableFlagParsing {
		// An unknown command (cobra says so later) or cobra's hidden
		// __complete, which parses its own arguments.
		return args
	}
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			a = "-" + a
		}
		out = append(out, a)
		name, _, inline := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || inline {
			continue
		}
		// A flag that takes a value takes the next argument whatever it
		// looks like; pass it through untouched.
		if f := cmd.Flags().Lookup(name); f != nil && f.NoOptDefVal == "" && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out
}

// suggestFlag names the defined flag closest to an undefined one, for the
// one-line error (cobra suggests commands, not flags).
func suggestFlag(cmd *cobra.Command, err error) string {
	var missing *pflag.NotExistError
	if !errors.As(err, &missing) {
		return ""
	}
	name := missing.GetSpecifiedName()
	best, bestDist := "", 3
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if d := suggest.Distance(name, f.Name); d < bestDist || (strings.HasPrefix(f.Name, name) && bestDist > 1) {
			best, bestDist = f.Name, min(d, 1)
		}
	})
	if best == "" {
		return ""
	}
	return " (did you mean --" + best + "?)"
}
