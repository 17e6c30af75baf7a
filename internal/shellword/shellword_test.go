package shellword_test

import (
	"testing"

	"github.com/lockchaos/lockchaos/internal/shellword"
)

// A plain word stays as typed; anything a shell reads specially is
// single-quoted, a quote inside ended, escaped and begun again.
// (cmd/lockchaos's TestRerunLinesAreShellSafe hands lines to a real shell.)
func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"token":        "token",
		"out/run-1":    "out/run-1",
		"":             "''",
		"a b":          "'a b'",
		"$(touch x)":   "'$(touch x)'",
		"it's":         `'it'\''s'`,
		"[::1]:6379":   "'[::1]:6379'",
		"token,naive":  "token,naive",
		"--seed=1":     "--seed=1",
		"semi;colon":   "'semi;colon'",
		"glob*":        "'glob*'",
		"~home":        "'~home'",
		"new\nline":    "'new\nline'",
		"back\\slash":  `'back\slash'`,
		"quote\"d":     `'quote"d'`,
		"tab\tbed":     "'tab\tbed'",
		"@%+=:,./_-ok": "@%+=:,./_-ok",
	} {
		if got := shellword.Quote(in); got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
	}
	if got := shellword.Join([]string{"lockchaos", "run", "--scenario", "a b"}); got != "lockchaos run --scenario 'a b'" {
		t.Errorf("Join: %q", got)
	}
}
