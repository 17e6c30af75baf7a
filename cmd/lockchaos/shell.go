package main

import "strings"

// Command lines the run prints (rerun lines, summary.json's command) are
// pasted into shells, so every argument is quoted for a POSIX shell
// (sh, bash, zsh): a name from someone's YAML file is data there, never
// code. An argument made only of characters no shell treats specially
// stays as it is, so a plain line reads as typed.

// shellSafe are the characters an unquoted word may hold: none of them
// splits, expands, globs, redirects or ends a command in a POSIX shell,
// wherever in a word it stands (a leading '=' or '%' is plain outside a
// command's first word, which is never an argument here).
const shellSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-"

// shellQuote is s as one shell word: s itself when every character is
// safe, else s in single quotes, each single quote in it ended, escaped
// with a backslash and begun again.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, shellSafe) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellJoin is args as one command line, each quoted.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}
