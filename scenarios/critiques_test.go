package scenarios_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/scenarios"
)

// The critiques reach a Go user without the file: Critiques is the file
// the CLI and make chaos-critiques read, scenario for scenario, and Named
// finds them beside the catalog's.
func TestCritiquesAreEmbedded(t *testing.T) {
	f, err := scenarios.LoadFile("critiques.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := scenarios.Critiques()
	if len(got) == 0 || !reflect.DeepEqual(got, f.Scenarios) {
		t.Fatalf("Critiques() = %v, want critiques.yaml's %v", scenarios.Names(got), scenarios.Names(f.Scenarios))
	}
	for _, name := range []string{"clock-jump", "sentinel-failover", "gc-pause"} {
		sc, err := scenarios.Named(name)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Name != name || sc.TTL == 0 {
			t.Errorf("Named(%q) = %s with TTL %v, want the scenario with defaults filled", name, sc.Name, sc.TTL)
		}
	}
	_, err = scenarios.Named("clock-jmp")
	if !errors.Is(err, scenarios.ErrUnknownScenario) || !strings.Contains(err.Error(), "clock-jump") ||
		!strings.Contains(err.Error(), "baseline") {
		t.Errorf("an unknown name: %v, want ErrUnknownScenario listing the catalog's and the critiques' names", err)
	}
}
