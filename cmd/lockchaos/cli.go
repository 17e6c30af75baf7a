package main

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/internal/cobrakit"
	"github.com/lockchaos/lockchaos/internal/outdir"
)

// cli is what every command shares: where it writes, and the command line
// as parsed (run records it in summary.json as the command that reran it).
type cli struct {
	stdout, stderr io.Writer
	args           []string
	// order is the commands in the order the usage lists them; cobra
	// sorts them by name.
	order []string
}

// argsAfter is the command line after the command's name: what the user
// typed to that command. The root's own flags (--help, --version) take no
// value and end the run, so the first occurrence is the command.
func (cl *cli) argsAfter(name string) []string {
	if i := slices.Index(cl.args, name); i >= 0 {
		return cl.args[i+1:]
	}
	return nil
}

// exitCode carries a command's documented exit code out of cobra's RunE;
// the command has already said why on stderr.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// done is what a RunE returns for a command's exit code.
func done(code int) error {
	if code == exitOK {
		return nil
	}
	return exitCode(code)
}

// flagError is a flag pflag could not parse, kept with its command so the
// message can name the command and suggest the flag that was meant.
type flagError struct {
	cmd *cobra.Command
	err error
}

func (e *flagError) Error() string { return e.err.Error() }
func (e *flagError) Unwrap() error { return e.err }

// newRoot is the command tree. cobra's own error printing and usage dumps
// are off: each failure gets one line from exitFor instead, and the
// commands print their own help.
func newRoot(cl *cli) *cobra.Command {
	root := &cobra.Command{
		Use:                        "lockchaos",
		Short:                      "a chaos and correctness harness for distributed locks on Redis",
		Version:                    version + " (" + runtime.Version() + ")",
		SilenceErrors:              true,
		SilenceUsage:               true,
		SuggestionsMinimumDistance: 2,
		// Our completion command prints the scripts with instructions
		// and exits 2 on an unknown shell; cobra's would print its help
		// and exit 0.
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.SetOut(cl.stdout)
	root.SetErr(cl.stderr)
	root.SetVersionTemplate("lockchaos {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &flagError{cmd: c, err: err} })
	// One help for every command (helpText): asked for, on stdout;
	// cobra's usage on a failure is off (SilenceUsage), but should it
	// print one, it is the same text, on stderr.
	root.SetHelpFunc(func(c *cobra.Command, _ []string) { fmt.Fprint(c.OutOrStdout(), cl.helpText(c)) })
	root.SetUsageFunc(func(c *cobra.Command) error {
		fmt.Fprint(c.ErrOrStderr(), cl.helpText(c))
		return nil
	})
	root.SetHelpCommand(newHelpCmd(cl))
	for _, c := range []*cobra.Command{
		newRunCmd(cl), newChooseCmd(cl), newListCmd(cl), newCheckCmd(cl), newMarginsCmd(cl), newReportCmd(cl), newCompareCmd(cl),
		newCompletionCmd(cl), newVersionCmd(cl),
	} {
		root.AddCommand(c)
		cl.order = append(cl.order, c.Name())
	}
	cl.order = append(cl.order, "help")
	// What cobra adds as it executes, added now: the usage printed
	// without executing (no arguments) lists them too.
	root.InitDefaultHelpCmd()
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	return root
}

// exitFor maps what cobra returned to an exit code, saying in one line
// what was wrong where cobra would have printed the usage.
func (cl *cli) exitFor(root, cmd *cobra.Command, err error) int {
	var code exitCode
	var flagErr *flagError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &code):
		return int(code)
	case errors.As(err, &flagErr):
		name := flagErr.cmd.CommandPath()
		fmt.Fprintf(cl.stderr, "%s: %v%s\nRun '%s --help' for its flags.\n", name, flagErr.err,
			cobrakit.SuggestFlag(flagErr.cmd, flagErr.err), name)
	case cmd == nil || cmd == root:
		// At the root the only other failure is cobra's Find: the first
		// argument names no command.
		cl.unknownCommand(root)
	default:
		fmt.Fprintf(cl.stderr, "%s: %v\nRun '%s --help' for usage.\n", cmd.CommandPath(), err, cmd.CommandPath())
	}
	return exitUsage
}

// unknownCommand names the valid commands and, where one is close,
// cobra's suggestion.
func (cl *cli) unknownCommand(root *cobra.Command) {
	name := ""
	for _, a := range cl.args {
		if !strings.HasPrefix(a, "-") {
			name = a
			break
		}
	}
	cl.unknownName(root, "lockchaos", name)
	fmt.Fprintln(cl.stderr, "Run 'lockchaos help' for usage.")
}

// unknownName says on one line that name is no command of who's, the
// valid ones and, where one is close, cobra's suggestion.
func (cl *cli) unknownName(root *cobra.Command, who, name string) {
	fmt.Fprintf(cl.stderr, "%s: unknown command %q (valid: %s)", who, name, strings.Join(cl.order, ", "))
	if s := root.SuggestionsFor(name); len(s) > 0 {
		fmt.Fprintf(cl.stderr, "; did you mean %s?", strings.Join(s, " or "))
	}
	fmt.Fprintln(cl.stderr)
}

func newVersionCmd(cl *cli) *cobra.Command {
	return &cobra.Command{
		Use: "version", Short: "the version of this build", Long: usage("version"),
		// Arguments were ignored before cobra; they still are.
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			fmt.Fprintf(cl.stdout, "lockchaos %s\n", c.Root().Version)
			return nil
		},
		ValidArgsFunction: cobra.NoFileCompletions,
	}
}

// claimOut claims dir as the command's output directory (outdir.Claim),
// its errors named by the flag.
func claimOut(dir string) (release func(), err error) {
	release, err = outdir.Claim(dir)
	if err != nil {
		return nil, fmt.Errorf("--out %w", err)
	}
	return release, nil
}
