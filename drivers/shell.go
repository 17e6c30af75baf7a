package drivers

import "strings"

// shellLine is the line sh runs. A simple command is exec'd, so the driver
// replaces the shell and the parent-death signal reaches the driver itself
// when the harness dies; a compound one (a pipeline, a list) runs under the
// shell, and its drivers end on their stdin closing, as the protocol says.
// Leading assignments stay in front of exec ("BUG=x exec ruby bad.rb":
// POSIX sh exports them to the command exec runs), and a command that
// starts with exec is left as it is.
func shellLine(command string) string {
	command = strings.TrimLeft(command, " \t")
	if strings.ContainsAny(command, ";&|()\n`") {
		return command
	}
	assigns := 0
	for {
		n := wordEnd(command[assigns:])
		if n == 0 || !isAssignment(command[assigns:assigns+n]) {
			break
		}
		assigns += n
		for assigns < len(command) && (command[assigns] == ' ' || command[assigns] == '\t') {
			assigns++
		}
	}
	rest := command[assigns:]
	if rest == "" || rest == "exec" || strings.HasPrefix(rest, "exec ") || strings.HasPrefix(rest, "exec\t") {
		return command
	}
	return command[:assigns] + "exec " + rest
}

// wordEnd is the length of the shell word s starts with: up to the first
// blank outside quotes, a backslash escape or a ${...} (whose default may
// hold blanks). An unterminated quote runs to the end.
func wordEnd(s string) int {
	braces := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case c == '\'':
			if j := strings.IndexByte(s[i+1:], '\''); j >= 0 {
				i += j + 1
			} else {
				return len(s)
			}
		case c == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case c == '$' && i+1 < len(s) && s[i+1] == '{':
			braces++
			i++
		case c == '}' && braces > 0:
			braces--
		case (c == ' ' || c == '\t') && braces == 0:
			return i
		}
	}
	return len(s)
}

// isAssignment reports whether a shell word is NAME=value.
func isAssignment(word string) bool {
	name, _, ok := strings.Cut(word, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if c != '_' && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
