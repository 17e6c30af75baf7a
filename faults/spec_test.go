package faults

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// A fault entry decodes into its kind's own parameters and is written
// back as the same flat mapping, in YAML and JSON alike.
func TestSpecDecodesIntoItsKindsParameters(t *testing.T) {
	var s Spec
	if err := yaml.Unmarshal([]byte("kind: slow-reply\ndelay: 300ms\nwork: 1s\n"), &s); err != nil {
		t.Fatal(err)
	}
	want := Spec{Kind: "slow-reply", Params: SlowReplyParams{Delay: 300 * time.Millisecond, Work: time.Second}}
	if s != want {
		t.Fatalf("decoded %+v, want %+v", s, want)
	}
	if b, err := yaml.Marshal(s); err != nil || string(b) != "kind: slow-reply\ndelay: 300ms\nwork: 1s\n" {
		t.Errorf("yaml: %q, %v", b, err)
	}
	b, err := json.Marshal(s)
	if err != nil || string(b) != `{"kind":"slow-reply","delay":300000000,"work":1000000000}` {
		t.Errorf("json: %s, %v", b, err)
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil || back != want {
		t.Errorf("json back: %+v, %v", back, err)
	}
	if b, _ := json.Marshal(Spec{Kind: "abandoned-lease"}); string(b) != `{"kind":"abandoned-lease"}` {
		t.Errorf("json without parameters: %s", b)
	}
}

// Parameters of another kind, a negative duration or an unknown kind are
// refused; a scaled spec keeps its shape.
func TestSpecValidatesAndScalesItsParameters(t *testing.T) {
	for _, s := range []Spec{
		{Kind: "client-pause", Params: SlowHolderParams{Work: time.Second}},
		{Kind: "client-pause", Params: ClientPauseParams{Pause: -time.Second}},
		{Kind: "latency", Params: LatencyParams{Direction: "sideways"}},
	} {
		if err := s.Validate(); err == nil {
			t.Errorf("%+v: valid", s)
		}
	}
	if err := (Spec{Kind: "nope"}).Validate(); !errors.Is(err, ErrUnknownFault) {
		t.Errorf("unknown kind: %v", err)
	}
	if err := (Spec{Kind: "clock-jump", Params: ClockJumpParams{Jump: -time.Second}}).Validate(); err != nil {
		t.Errorf("a jump back: %v", err)
	}
	got := Spec{Kind: "clock-jump", Params: ClockJumpParams{Duration: time.Second, Jump: -time.Second}}.Scaled(2)
	if got.Params != (ClockJumpParams{Duration: 2 * time.Second, Jump: -2 * time.Second}) {
		t.Errorf("scaled: %+v", got)
	}
	f, err := Spec{Kind: "client-pause"}.Build(100 * time.Millisecond)
	if err != nil || f.(ClientPause).Pause != 150*time.Millisecond {
		t.Errorf("built %+v, %v; want the default pause, 1.5x TTL", f, err)
	}
}
