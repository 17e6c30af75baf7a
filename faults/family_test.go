package faults_test

import (
	"slices"
	"testing"

	"github.com/lockchaos/lockchaos/faults"
)

// Every kind sits in one of the families a comparison shows, each of
// which says what it is: a kind without one would drop out of
// `lockchaos choose`'s table.
func TestEveryKindHasAFamily(t *testing.T) {
	for _, k := range faults.Kinds() {
		if !slices.Contains(faults.Families(), k.Family) {
			t.Errorf("fault kind %s: family %q is not one of %v", k.Name, k.Family, faults.Families())
		}
	}
	for _, f := range faults.Families() {
		if f.Doc() == "" {
			t.Errorf("family %q says nothing of itself", f)
		}
	}
}
