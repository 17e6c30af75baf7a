package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/internal/cobrakit"
)

// The one help of every command: its usage line, its text, and its flags
// under "Flags:", each flag's default said once. Help that was asked for
// goes to stdout (lockchaos run --help | less); a usage error stays on
// stderr with exit 2.

// helpText is c's help: the root's lists every command.
func (cl *cli) helpText(c *cobra.Command) string {
	var b strings.Builder
	if !c.HasParent() {
		fmt.Fprintf(&b, "lockchaos: %s\n\nUsage:\n", c.Short)
		cmds, lines, width := cl.commandLines(c)
		for i, sub := range cmds {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, lines[i], sub.Short)
		}
		fmt.Fprintf(&b, "\n%s\n", usage("root"))
	} else {
		fmt.Fprintf(&b, "Usage: %s\n", cobrakit.UseLine(c))
		if long := strings.TrimSpace(c.Long); long != "" {
			fmt.Fprintf(&b, "\n%s\n", long)
		}
	}
	// cobra adds --help as it executes c, not when "help c" asks.
	c.InitDefaultHelpFlag()
	fmt.Fprintf(&b, "\nFlags:\n%s", cobrakit.FlagUsages(c.Flags()))
	return b.String()
}

// commandLines are the usage lines of root's commands in the order the
// usage lists them (cobra sorts them by name), and the widest.
func (cl *cli) commandLines(root *cobra.Command) ([]*cobra.Command, []string, int) {
	var cmds []*cobra.Command
	var lines []string
	width := 0
	for _, name := range cl.order {
		sub, _, err := root.Find([]string{name})
		if err != nil || sub == root || sub.Hidden {
			continue
		}
		cmds, lines = append(cmds, sub), append(lines, cobrakit.UseLine(sub))
		width = max(width, len(lines[len(lines)-1]))
	}
	return cmds, lines, width
}

// newHelpCmd is "lockchaos help [COMMAND]": cobra's prints the root's
// usage and exits 0 for a topic it does not know.
func newHelpCmd(cl *cli) *cobra.Command {
	return &cobra.Command{
		Use: "help [COMMAND]", Short: "this text, or a command's flags and examples", Long: usage("help"),
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 || (target == c.Root() && len(args) > 0) {
				cl.unknownName(c.Root(), "lockchaos help", strings.Join(args, " "))
				return exitCode(exitUsage)
			}
			fmt.Fprint(cl.stdout, cl.helpText(target))
			return nil
		},
		ValidArgsFunction: func(c *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []cobra.Completion
			cmds, _, _ := cl.commandLines(c.Root())
			for _, sub := range cmds {
				names = append(names, cobra.CompletionWithDesc(sub.Name(), sub.Short))
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
	}
}
