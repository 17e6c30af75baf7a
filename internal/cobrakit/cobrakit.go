// Package cobrakit is what the CLI adds to cobra and pflag: single-dash
// long flags as the standard flag package took them, a suggestion for a
// mistyped flag, one help layout with each default said once, completion
// of choices and comma-separated lists, and the completion scripts.
package cobrakit

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockchaos/lockchaos/internal/suggest"
)

// LongFlags rewrites single-dash long flags (-json, -seed=5) as pflag
// wants them (--json, --seed=5). The standard flag package this CLI used
// to parse with accepted both, and command lines in scripts and CI jobs
// must keep working. We define no one-letter flags but cobra's -h and -v,
// so a single dash before two or more letters is always a long flag, as it
// was for the flag package (an unknown one then gets the usual suggestion).
// Values are never rewritten (--budget -1s), nor is anything after "--":
// the command is looked up first because only its flags say which take a
// value.
func LongFlags(root *cobra.Command, args []string) []string {
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

// SuggestFlag names the defined flag closest to an undefined one, for the
// one-line error (cobra suggests commands, not flags).
func SuggestFlag(cmd *cobra.Command, err error) string {
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

// UseLine is c's command path with its arguments, "[flags]" after the
// name when it has flags of its own beyond --help and its Use does not
// spell them out.
func UseLine(c *cobra.Command) string {
	_, args, _ := strings.Cut(c.Use, " ")
	line := c.CommandPath()
	if !strings.Contains(args, "--") && !strings.Contains(args, "[flags]") && ownFlags(c) {
		line += " [flags]"
	}
	if args != "" {
		line += " " + args
	}
	return line
}

// ownFlags says whether c has a flag other than --help.
func ownFlags(c *cobra.Command) bool {
	own := false
	c.Flags().VisitAll(func(f *pflag.Flag) { own = own || (f.Name != "help" && !f.Hidden) })
	return own
}

// unshownDefault hides a flag's default from pflag's list: pflag shows no
// default for a value type it does not know whose default is "".
type unshownDefault struct{ pflag.Value }

// FlagUsages is pflag's list of fs's flags with each default said once:
// a flag whose usage already says its default ("default: one per core")
// does not also get pflag's "(default 2)". A bool keeps its own
// rendering (its false default is never shown).
func FlagUsages(fs *pflag.FlagSet) string {
	shown := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.VisitAll(func(f *pflag.Flag) {
		g := *f
		if f.Value.Type() != "bool" && strings.Contains(f.Usage, "default") {
			g.Value, g.DefValue = unshownDefault{f.Value}, ""
		}
		shown.AddFlag(&g)
	})
	return shown.FlagUsages()
}

// Choices offers the values that start with what is typed.
func Choices(choices func() []cobra.Completion) cobra.CompletionFunc {
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

// List completes the last item of a comma-separated flag value
// (--scenario baseline,gc<TAB>), leaving out the items already listed;
// each candidate repeats the typed head, as the shell replaces the word.
func List(choices func() []cobra.Completion) cobra.CompletionFunc {
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

// NoFilesForTheRest keeps the shell from offering file names for a
// flag whose value is a number, a duration or a name we cannot list: a
// flag with neither a completion function nor a file or directory mark
// completes to nothing.
func NoFilesForTheRest(c *cobra.Command) {
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
		Must(c.RegisterFlagCompletionFunc(f.Name, cobra.NoFileCompletions))
	})
}

// Must panics on an error that only a mistake in the caller can cause
// (registering completion for a flag that does not exist, or twice).
func Must(err error) {
	if err != nil {
		panic(err)
	}
}

// shells write cobra's completion script for each shell it supports.
var shells = []struct {
	name  string
	write func(root *cobra.Command, w io.Writer, descriptions bool) error
}{
	{"bash", func(r *cobra.Command, w io.Writer, d bool) error { return r.GenBashCompletionV2(w, d) }},
	{"zsh", func(r *cobra.Command, w io.Writer, d bool) error {
		if d {
			return r.GenZshCompletion(w)
		}
		return r.GenZshCompletionNoDesc(w)
	}},
	{"fish", func(r *cobra.Command, w io.Writer, d bool) error { return r.GenFishCompletion(w, d) }},
	{"powershell", func(r *cobra.Command, w io.Writer, d bool) error {
		if d {
			return r.GenPowerShellCompletionWithDesc(w)
		}
		return r.GenPowerShellCompletion(w)
	}},
}

// ErrUnknownShell is a shell cobra writes no script for.
var ErrUnknownShell = errors.New("cobrakit: unknown shell")

// WriteScript writes root's completion script for shell to w.
func WriteScript(root *cobra.Command, shell string, w io.Writer, descriptions bool) error {
	for _, s := range shells {
		if s.name == shell {
			return s.write(root, w, descriptions)
		}
	}
	return fmt.Errorf("%w %q", ErrUnknownShell, shell)
}

// ShellNames is "bash, zsh, fish, powershell", for messages.
func ShellNames() string {
	names := make([]string, len(shells))
	for i, s := range shells {
		names[i] = s.name
	}
	return strings.Join(names, ", ")
}

// Pin is a command line (args, after the command's name) with each of
// pins (flag, value) in place of what was given for that flag, appended
// at the end before any "--". fs, the command's flags, says which flags
// take a value: that value is passed through whatever it looks like
// (--lock-driver '--seed').
func Pin(fs *pflag.FlagSet, args []string, pins [][2]string) []string {
	pinned := map[string]bool{}
	for _, p := range pins {
		pinned[p[0]] = true
	}
	var out, tail []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			tail = args[i:]
			break
		}
		name, _, inline := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		f := fs.Lookup(name)
		flag := strings.HasPrefix(a, "--") && f != nil
		takesValue := flag && !inline && f.NoOptDefVal == "" && i+1 < len(args)
		if !flag || !pinned[name] {
			out = append(out, a)
		}
		if takesValue {
			i++
			if !pinned[name] {
				out = append(out, args[i])
			}
		}
	}
	for _, p := range pins {
		out = append(out, "--"+p[0], p[1])
	}
	return append(out, tail...)
}
