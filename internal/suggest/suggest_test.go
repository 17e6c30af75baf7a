package suggest

import "testing"

func TestClosest(t *testing.T) {
	valid := []string{"signals_loss", "renews", "nodes", "slow-holder", "baseline"}
	for _, c := range []struct{ in, want string }{
		{"signal_loss", "signals_loss"},
		{"slow-holdr", "slow-holder"},
		{"Renews", "renews"},
		{"node", "nodes"},
		{"nod", ""}, // a short name must be nearer than 2 edits
		{"xyz", ""},
		{"completely-different", ""},
	} {
		if got := Closest(c.in, valid); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if d := Distance("kitten", "sitting"); d != 3 {
		t.Errorf("Distance(kitten, sitting) = %d, want 3", d)
	}
}
