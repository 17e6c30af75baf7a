package main

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"

	"github.com/lockchaos/lockchaos/results"
)

// useColour says whether w gets ANSI colours: a terminal, NO_COLOR unset
// (https://no-color.org), TERM not dumb.
func useColour(w io.Writer) bool {
	f, ok := w.(*os.File)
	return colourFor(ok && isatty.IsTerminal(f.Fd()), os.Getenv)
}

// colourFor is useColour's rule, given whether the output is a terminal.
func colourFor(terminal bool, getenv func(string) string) bool {
	return terminal && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

// outcomeColours are the terminal's version of the HTML palette: what a
// reader must act on stands out.
var outcomeColours = map[results.Outcome]string{
	results.Met:          "32",   // green
	results.Regression:   "1;31", // bold red
	results.Missed:       "1;33", // bold yellow
	results.HarnessError: "1;31",
	results.Unknown:      "33",
	results.Inconclusive: "35", // magenta
	results.Interrupted:  "2",  // dim
	results.Skipped:      "2",
}

// paint pads text to width (as %-Ns would), then colours it when on.
func paint(on bool, o results.Outcome, text string, width int) string {
	for len(text) < width {
		text += " "
	}
	code, ok := outcomeColours[o]
	if !on || !ok {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}
