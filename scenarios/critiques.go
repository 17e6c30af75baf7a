package scenarios

import (
	_ "embed" // critiques.yaml
	"fmt"
)

// critiquesYAML is scenarios/critiques.yaml, embedded so a Go user can run
// the critiques without finding the file in the module cache.
//
//go:embed critiques.yaml
var critiquesYAML []byte

// CritiquesFile names the embedded file in errors and in rerun lines.
const CritiquesFile = "scenarios/critiques.yaml"

// Critiques returns the scenarios of scenarios/critiques.yaml (clock jumps,
// power loss, one-way partitions, real Sentinel failover), in file order,
// as Catalog returns its own: kept out of the default matrix, which stays
// near 30 s, and run by `make chaos-critiques`.
func Critiques() []Scenario {
	f, err := Load(critiquesYAML, CritiquesFile)
	if err != nil {
		// The file is compiled in and TestCritiquesLoad loads it: an
		// error here is a broken build, not a user's input.
		panic(fmt.Sprintf("scenarios: embedded %s: %v", CritiquesFile, err))
	}
	return f.Scenarios
}

// Named returns the scenario of that name from the catalog or the
// critiques, with defaults filled; an unknown name is an error listing
// every valid one.
func Named(name string) (Scenario, error) {
	return find(append(Catalog(), Critiques()...), name)
}
