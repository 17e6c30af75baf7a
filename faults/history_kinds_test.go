package faults_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/history"
)

// Every registered kind is one a history's header may list, and a name
// no kind has is bad input listing the valid ones: history never imports
// faults, the registration tells it.
func TestHistoryHeadersKnowEveryRegisteredKind(t *testing.T) {
	header := func(kind string) string {
		return `{"format":4,"scenario":"s","lock":"token","seed":1,"start":"2026-01-01T00:00:00Z","faults":["` + kind + `"]}` + "\n"
	}
	for _, k := range faults.Kinds() {
		if _, err := history.Load(strings.NewReader(header(k.Name)), "h.jsonl"); err != nil {
			t.Errorf("kind %s: %v", k.Name, err)
		}
	}
	_, err := history.Load(strings.NewReader(header("teleport")), "h.jsonl")
	if !errors.Is(err, history.ErrMalformed) || !strings.Contains(err.Error(), `h.jsonl:1: header: unknown fault kind "teleport" (valid: `) ||
		!strings.Contains(err.Error(), "client-pause") {
		t.Fatalf("an unknown kind: %v", err)
	}
}
