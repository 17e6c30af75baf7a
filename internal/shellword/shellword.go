// Package shellword quotes command lines for a POSIX shell (sh, bash,
// zsh). The lines lockchaos prints (rerun lines, summary.json's command,
// a margin's replay) are pasted into shells, so a name from someone's
// YAML file must be data there, never code. A word made only of
// characters no shell treats specially stays as it is, so a plain line
// reads as typed.
package shellword

import "strings"

// safe are the characters an unquoted word may hold: none of them
// splits, expands, globs, redirects or ends a command in a POSIX shell,
// wherever in a word it stands (a leading '=' or '%' is plain outside a
// command's first word, which is never an argument here).
const safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-"

// Quote is s as one shell word: s itself when every character is safe,
// else s in single quotes, each single quote in it ended, escaped with a
// backslash and begun again.
func Quote(s string) string {
	if s != "" && strings.Trim(s, safe) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join is args as one command line, each quoted.
func Join(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}
