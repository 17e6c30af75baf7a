package margins_test

import (
	"slices"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/margins"
)

type cfg struct {
	ttl   time.Duration
	given []time.Duration
}

// The liveness margins' default TTLs (half, once and twice --ttl) stay in
// the range --recovery-ttl takes: at --ttl 10ms a pod-crash ran at a 5 ms
// TTL, and at --ttl 1m at two minutes.
func TestMarginsLivenessTTLsInRange(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		cfg  cfg
		want []time.Duration
	}{
		{cfg{ttl: 300 * ms}, []time.Duration{150 * ms, 300 * ms, 600 * ms}},
		{cfg{ttl: 10 * ms}, []time.Duration{10 * ms, 20 * ms}},
		{cfg{ttl: time.Minute}, []time.Duration{30 * time.Second, time.Minute}},
		{cfg{ttl: 10 * ms, given: []time.Duration{40 * ms}}, []time.Duration{40 * ms}},
		{cfg{ttl: 300 * ms, given: []time.Duration{0}}, nil},
	} {
		if got := margins.LivenessTTLs(c.cfg.ttl, c.cfg.given); !slices.Equal(got, c.want) {
			t.Errorf("--ttl %v, --recovery-ttl %v: %v, want %v", c.cfg.ttl, c.cfg.given, got, c.want)
		}
	}
}
