package main

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
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
